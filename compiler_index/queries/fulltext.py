"""Full-text search (SQLite FTS5) over function bodies, messages, TableGen records and pipeline steps."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from compiler_index.queries.context import Context, connection
from compiler_index.queries.results import QueryError, SearchHit


def search(db: str | Path | sqlite3.Connection, text: str, limit: int = 20) -> list[SearchHit]:
    """Full-text search over function bodies, messages, TableGen records and pipeline steps (SQLite FTS5)."""
    words = re.findall(r"[\w]+\*?", text)
    if not words:
        raise QueryError(f"nothing to search for in {text!r}")
    with connection(db) as con:
        ctx = Context(con)
        hits: list[SearchHit] = []
        for match in (" ".join(_fts_word(w) for w in words), " OR ".join(_fts_word(w) for w in words)):
            rows = con.execute(
                "SELECT d.kind, d.name, d.file_id, d.line, fts.text FROM fts JOIN search_docs d ON "
                "d.id = fts.rowid WHERE fts MATCH ? ORDER BY rank LIMIT ?",
                (match, limit),
            ).fetchall()
            for r in rows:
                line, snippet = _first_line_with(r["text"], words, r["line"])
                hits.append(SearchHit(r["kind"], r["name"], ctx.loc(r["file_id"], line, snippet), snippet))
            if hits or len(words) == 1:
                break
        return hits


def _fts_word(word: str) -> str:
    prefix = word.endswith("*")
    return '"' + word.rstrip("*").replace('"', "") + '"' + ("*" if prefix else "")


def _first_line_with(text: str, words: list[str], first_line: int) -> tuple[int, str]:
    low = text.lower()
    positions = [low.find(w.rstrip("*").lower()) for w in words]
    positions = [p for p in positions if p >= 0]
    if not positions:
        return first_line, text.split("\n", 1)[0].strip()[:200]
    pos = min(positions)
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return first_line + text.count("\n", 0, pos), text[start : end if end >= 0 else None].strip()[:200]
