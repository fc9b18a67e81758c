"""Which code emits a message seen at compile time (remark, warning, error, debug output), matched by the
message's literal text."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from compiler_index.queries.context import Context, connection
from compiler_index.queries.results import QueryError, RemarkMatch

REMARK_KINDS = ("remark", "warning", "error", "match-failure", "fatal", "debug", "assert")


_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
# The diagnostic's location and severity as MLIR prints them (`loc("k.py":3:12): remark: `, `k.py:3:12: warning: `);
# the message itself may start with a word like "Warning:" too, so a bare leading severity is kept.
_DIAG_PREFIX = re.compile(r"^(?:loc\(.*?\)|[^\s:]+:\d+(?::\d+)?)\s*:?\s*(remark|warning|error|note):\s*", re.I)


def remarks(
    db: str | Path | sqlite3.Connection, text: str, limit: int = 10, kinds: tuple[str, ...] = REMARK_KINDS
) -> list[RemarkMatch]:
    """Which code emits a message seen at compile time. `text` may be the whole diagnostic line, runtime values
    included (`…: remark: Warning: vectorization fails vec = 1 origin vec = 4 …`), or any part of the message."""
    with connection(db) as con:
        ctx = Context(con)
        query = _DIAG_PREFIX.sub("", text.strip()).strip()
        if not query:
            raise QueryError("empty remark text")
        q_low = query.lower()
        scored: list[tuple[float, sqlite3.Row]] = []
        for g in _remark_candidates(con, query, kinds):
            score = _remark_score(q_low, g["message"])
            if score >= 0.5:
                scored.append((score, g))
        scored.sort(
            key=lambda sg: (
                -sg[0],
                REMARK_KINDS.index(sg[1]["kind"]) if sg[1]["kind"] in REMARK_KINDS else 99,
                sg[1]["file_id"],
                sg[1]["line"],
            )
        )
        out = []
        for score, g in scored[:limit]:
            fn, ref = ctx.fn_ref_by_id(g["function_id"])
            owners = ctx.owners(fn) if fn else set()
            loc = ctx.loc(g["file_id"], g["line"], g["snippet"])
            out.append(
                RemarkMatch(
                    g["kind"],
                    g["message"],
                    g["condition"],
                    loc,
                    ref,
                    round(score, 3),
                    ctx.pass_args(owners),
                    ctx.debug_types.get(g["file_id"]) if g["kind"] == "debug" else None,
                )
            )
        if not out:
            raise QueryError(f"no remark, warning, error or debug message in the index matches {query!r}")
        return out


def _remark_candidates(con: sqlite3.Connection, query: str, kinds: tuple[str, ...]) -> list[sqlite3.Row]:
    """Messages sharing a word with the query (full-text index), or all of them when the query has no word."""
    marks = ",".join("?" * len(kinds))
    words = list(dict.fromkeys(w.lower() for w in re.findall(r"[A-Za-z_]{3,}", query)))[:24]
    if not words:
        return con.execute(f"SELECT * FROM gates WHERE message != '' AND kind IN ({marks})", kinds).fetchall()
    return con.execute(
        f"SELECT DISTINCT g.* FROM fts JOIN search_docs d ON d.id = fts.rowid JOIN gates g ON g.file_id = d.file_id "
        f"AND g.line = d.line AND g.kind = d.kind WHERE fts MATCH ? AND d.kind IN ({marks}) AND g.message != '' "
        f"ORDER BY rank LIMIT 400",
        (" OR ".join(f'"{w}"' for w in words), *kinds),
    ).fetchall()


def _remark_score(query: str, message: str) -> float:
    msg = message.lower()
    if query in msg:  # part of the message
        return 0.5 + 0.5 * len(query) / max(len(_PLACEHOLDER.sub("", msg)), 1)
    pieces = [p.strip() for p in _PLACEHOLDER.split(msg)]
    pieces = [p for p in pieces if len(p) >= 3]
    total = sum(len(p) for p in pieces)
    if total < 6:
        return 0.0
    return sum(len(p) for p in pieces if p in query) / total
