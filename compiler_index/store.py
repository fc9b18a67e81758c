"""The SQLite index: schema, schema version, per-file facts and full-text search.

Per-file tables hold what the extractors found and are replaced file by file (incremental builds key on content
hashes). Derived tables (passes, ops, patterns, adders, …; see `compiler_index.link`) are recomputed from them after
every build that changed something. `meta.schema_version` guards the format: queries refuse a database written by
another version and say how to rebuild it.

Each file row names the backend that extracted it (`files.backend`: tree-sitter, libclang, python-ast), and so do
the rows libclang can resolve (functions, classes, calls, op_sites: `backend`): in a libclang file, what the compiler
did not resolve keeps tree-sitter's reading and says so.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from compiler_index.model import FileFacts

SCHEMA_VERSION = 3  # 2: backends (files.backend, rows' backend), libclang USRs and resolved calls; 3: gates' `expr`
#                    (return-expr gates) and guards from earlier exits: an index built before misses them

_FILE_TABLES = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE roots(id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, path TEXT NOT NULL,
                   base TEXT NOT NULL);
CREATE TABLE files(id INTEGER PRIMARY KEY, root_id INTEGER NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
                   path TEXT NOT NULL, lang TEXT NOT NULL, sha1 TEXT NOT NULL, size INTEGER,
                   lines INTEGER, parse_errors INTEGER, debug_type TEXT, error TEXT, backend TEXT NOT NULL,
                   deps TEXT, deps_key TEXT, diagnostics TEXT, UNIQUE(root_id, path));
CREATE TABLE functions(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                       name TEXT NOT NULL, cls TEXT, qualname TEXT NOT NULL, returns TEXT, line INTEGER,
                       end_line INTEGER, signature TEXT, ns TEXT, qual TEXT, cls_guess TEXT, ns_decl TEXT,
                       usr TEXT, overrides TEXT, backend TEXT NOT NULL);
CREATE INDEX functions_name ON functions(name);
CREATE INDEX functions_usr ON functions(usr);
CREATE INDEX functions_cls ON functions(cls);
CREATE INDEX functions_file ON functions(file_id);
CREATE TABLE classes(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                     name TEXT NOT NULL, kind TEXT, line INTEGER, end_line INTEGER, root_hint TEXT,
                     tparams TEXT, ancestors TEXT, backend TEXT NOT NULL);
CREATE INDEX classes_name ON classes(name);
CREATE TABLE class_bases(class_id INTEGER NOT NULL REFERENCES classes(id) ON DELETE CASCADE, position INTEGER,
                         text TEXT, name TEXT, targs TEXT);
CREATE INDEX class_bases_class ON class_bases(class_id);
CREATE TABLE calls(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                   caller_id INTEGER, callee TEXT NOT NULL, scope TEXT,
                   form TEXT, line INTEGER, snippet TEXT, target_usr TEXT, target TEXT, virtual INTEGER,
                   backend TEXT NOT NULL);
CREATE INDEX calls_callee ON calls(callee);
CREATE INDEX calls_caller ON calls(caller_id);
CREATE TABLE op_sites(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                      function_id INTEGER, action TEXT, how TEXT,
                      op_class TEXT, op_scope TEXT, target TEXT, line INTEGER, snippet TEXT,
                      backend TEXT NOT NULL);
CREATE INDEX op_sites_class ON op_sites(op_class, action);
CREATE INDEX op_sites_function ON op_sites(function_id);
CREATE TABLE gates(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                   function_id INTEGER, kind TEXT, condition TEXT,
                   guards TEXT, message TEXT, line INTEGER, snippet TEXT, expr TEXT);
CREATE INDEX gates_function ON gates(function_id);
CREATE TABLE registrations(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                           function_id INTEGER, pattern TEXT,
                           line INTEGER);
CREATE INDEX registrations_pattern ON registrations(pattern);
CREATE TABLE pass_impls(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                        how TEXT, key TEXT, class_name TEXT, line INTEGER);
CREATE TABLE py_adders(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                       function_id INTEGER, name TEXT, builder TEXT,
                       macro TEXT, line INTEGER, snippet TEXT);
CREATE TABLE py_submodules(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                           function_id INTEGER, callee TEXT,
                           rel_path TEXT, line INTEGER);
CREATE TABLE aliases(file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE, alias TEXT, target TEXT);
CREATE TABLE namespaces(file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE, name TEXT);
CREATE TABLE usings(file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE, target TEXT);
CREATE INDEX usings_file ON usings(file_id);
CREATE TABLE td_records(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                        kind TEXT, name TEXT, parents TEXT, params TEXT, lets TEXT, line INTEGER, end_line INTEGER,
                        snippet TEXT);
CREATE INDEX td_records_name ON td_records(name);
CREATE TABLE pipeline_stages(id INTEGER PRIMARY KEY,
                             file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE, backend TEXT,
                             stage TEXT, method TEXT, condition TEXT, line INTEGER);
CREATE TABLE pipeline_steps(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                            backend TEXT, method TEXT, position INTEGER, adder TEXT, args TEXT, condition TEXT,
                            line INTEGER, snippet TEXT);
CREATE INDEX pipeline_steps_adder ON pipeline_steps(adder);
CREATE TABLE search_docs(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                         kind TEXT, name TEXT, line INTEGER);
CREATE INDEX search_docs_file ON search_docs(file_id);
-- deleting a file cascades through file_id: each table needs it indexed
CREATE INDEX classes_file ON classes(file_id);
CREATE INDEX calls_file ON calls(file_id);
CREATE INDEX op_sites_file ON op_sites(file_id);
CREATE INDEX gates_file ON gates(file_id);
CREATE INDEX registrations_file ON registrations(file_id);
CREATE INDEX pass_impls_file ON pass_impls(file_id);
CREATE INDEX py_adders_file ON py_adders(file_id);
CREATE INDEX py_submodules_file ON py_submodules(file_id);
CREATE INDEX aliases_file ON aliases(file_id);
CREATE INDEX namespaces_file ON namespaces(file_id);
CREATE INDEX td_records_file ON td_records(file_id);
CREATE INDEX pipeline_stages_file ON pipeline_stages(file_id);
CREATE INDEX pipeline_steps_file ON pipeline_steps(file_id);
CREATE VIRTUAL TABLE fts USING fts5(name, text, tokenize = "unicode61 tokenchars '_'");
"""

# Derived tables: dropped and recomputed by compiler_index.link after every build that changed a file.
DERIVED_TABLES = """
CREATE TABLE td_dialects(def_name TEXT, name TEXT, cpp_namespace TEXT, file_id INTEGER, line INTEGER);
CREATE TABLE td_ops(def_name TEXT, name TEXT, dialect TEXT, mnemonic TEXT, cpp_class TEXT, cpp_namespace TEXT,
                    summary TEXT, file_id INTEGER, line INTEGER, snippet TEXT);
CREATE INDEX td_ops_name ON td_ops(name);
CREATE INDEX td_ops_class ON td_ops(cpp_class);
CREATE TABLE td_passes(def_name TEXT PRIMARY KEY, argument TEXT, anchor TEXT, summary TEXT, description TEXT,
                       options TEXT, dependent_dialects TEXT, constructor TEXT, file_id INTEGER, line INTEGER,
                       snippet TEXT);
CREATE INDEX td_passes_argument ON td_passes(argument);
CREATE TABLE drr_patterns(def_name TEXT, root_op TEXT, result_ops TEXT, file_id INTEGER, line INTEGER,
                          snippet TEXT);
CREATE TABLE patterns(class_id INTEGER, name TEXT, base TEXT, root_class TEXT, root_scope TEXT, file_id INTEGER,
                      line INTEGER, end_line INTEGER);
CREATE INDEX patterns_name ON patterns(name);
CREATE TABLE pass_classes(def_name TEXT, class_name TEXT, how TEXT, file_id INTEGER, line INTEGER);
CREATE INDEX pass_classes_def ON pass_classes(def_name);
CREATE INDEX pass_classes_class ON pass_classes(class_name);
CREATE TABLE adders(qualname TEXT, name TEXT, module TEXT, builder TEXT, def_name TEXT, match TEXT,
                    file_id INTEGER, line INTEGER, snippet TEXT);
CREATE INDEX adders_qualname ON adders(qualname);
CREATE INDEX adders_def ON adders(def_name);
CREATE TABLE pass_patterns(def_name TEXT, pattern TEXT, class_file_id INTEGER, registered_in INTEGER,
                           depth INTEGER);
CREATE INDEX pass_patterns_def ON pass_patterns(def_name);
CREATE INDEX pass_patterns_pattern ON pass_patterns(pattern);
"""

DERIVED_NAMES = [
    "td_dialects",
    "td_ops",
    "td_passes",
    "drr_patterns",
    "patterns",
    "pass_classes",
    "adders",
    "pass_patterns",
]


class IndexDbError(RuntimeError):
    """The index database is missing, unreadable or of another schema version."""


def create(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = connect(path)
    with con:
        con.executescript(_FILE_TABLES + DERIVED_TABLES)
        con.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    return con


def connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path)
    con.row_factory = sqlite3.Row
    con.execute("PRAGMA foreign_keys = ON")
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")
    return con


def schema_version(path: Path) -> int | None:
    """The schema version of an existing index file; None when the file is no index at all."""
    try:
        # as a URI (read-only mode) the path is percent-encoded: a raw '#' or '?' would end it early
        con = sqlite3.connect(f"{Path(path).absolute().as_uri()}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return None
    return int(row[0]) if row else None


def open_index(path: str | Path) -> sqlite3.Connection:
    """Open an index for queries; a clear error when it is missing or was written by another schema version."""
    p = Path(path)
    build_hint = f"build it with `compiler-index build --source third_party/triton --db {p}`"
    if not p.exists():
        raise IndexDbError(f"no compiler index at {p}; {build_hint}")
    version = schema_version(p)
    if version is None:
        raise IndexDbError(f"{p} is not a compiler index (no readable meta table); {build_hint}")
    if version != SCHEMA_VERSION:
        raise IndexDbError(
            f"{p} has index schema version {version}, this compiler_index reads version "
            f"{SCHEMA_VERSION}; rebuild it: `compiler-index build --rebuild --db {p} --source …`"
        )
    con = connect(p)
    if con.execute("SELECT value FROM meta WHERE key = 'complete'").fetchone() is None:
        con.close()
        raise IndexDbError(f"{p} is an unfinished build (it was interrupted); run `compiler-index build` again")
    return con


def set_meta(con: sqlite3.Connection, **values: str) -> None:
    con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))


def get_meta(con: sqlite3.Connection) -> dict[str, str]:
    return {r["key"]: r["value"] for r in con.execute("SELECT key, value FROM meta")}


def clear_files(con: sqlite3.Connection) -> None:
    """Drop every file's facts at once (faster than file by file)."""
    con.execute("DELETE FROM fts")
    con.execute("DELETE FROM files")


def delete_file(con: sqlite3.Connection, file_id: int) -> None:
    con.execute("DELETE FROM fts WHERE rowid IN (SELECT id FROM search_docs WHERE file_id = ?)", (file_id,))
    con.execute("DELETE FROM files WHERE id = ?", (file_id,))


def _search(con: sqlite3.Connection, file_id: int, docs: Iterable[tuple[str, str, int, str]]) -> None:
    for kind, name, line, text in docs:
        cur = con.execute(
            "INSERT INTO search_docs(file_id, kind, name, line) VALUES (?, ?, ?, ?)", (file_id, kind, name, line)
        )
        con.execute("INSERT INTO fts(rowid, name, text) VALUES (?, ?, ?)", (cur.lastrowid, name, text))


def write_file(
    con: sqlite3.Connection,
    root_id: int,
    rel: str,
    sha1: str,
    size: int,
    lines: int,
    facts: FileFacts,
    backend: str,
    deps_key: str | None = None,
) -> int:
    """Insert one file's facts (the caller deleted any previous version). Returns the file id."""
    cur = con.execute(
        "INSERT INTO files(root_id, path, lang, sha1, size, lines, parse_errors, debug_type, error, backend, deps, "
        "deps_key, diagnostics) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            root_id,
            rel,
            facts.lang,
            sha1,
            size,
            lines,
            facts.parse_errors,
            facts.debug_type,
            facts.error,
            backend,
            json.dumps(facts.deps) if facts.deps else None,
            deps_key,
            json.dumps(facts.diagnostics) if facts.diagnostics else None,
        ),
    )
    file_id = int(cur.lastrowid or 0)
    fn_ids: list[int] = []
    for f in facts.functions:  # cls/ns/qualname are settled by link.resolve_namespaces from the *_guess/_decl ones
        c = con.execute(
            "INSERT INTO functions(file_id, name, cls, qualname, returns, line, end_line, signature, ns, "
            "qual, cls_guess, ns_decl, usr, overrides, backend) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                file_id,
                f.name,
                f.cls,
                f.qualname,
                f.returns,
                f.line,
                f.end_line,
                f.signature,
                f.ns,
                f.qual,
                f.cls,
                f.ns,
                f.usr,
                json.dumps(f.overrides) if f.overrides else None,
                f.backend,
            ),
        )
        fn_ids.append(int(c.lastrowid or 0))

    def fid(i: int | None) -> int | None:
        return fn_ids[i] if i is not None else None

    for k in facts.classes:
        ancestors = None if k.ancestors is None else json.dumps([[b.name, b.targs] for b in k.ancestors])
        cur = con.execute(
            "INSERT INTO classes(file_id, name, kind, line, end_line, root_hint, tparams, ancestors, "
            "backend) VALUES (?,?,?,?,?,?,?,?,?)",
            (file_id, k.name, k.kind, k.line, k.end_line, k.root_hint, json.dumps(k.tparams), ancestors, k.backend),
        )
        con.executemany(
            "INSERT INTO class_bases VALUES (?, ?, ?, ?, ?)",
            [(cur.lastrowid, i, b.text, b.name, json.dumps(b.targs)) for i, b in enumerate(k.bases)],
        )
    con.executemany(
        "INSERT INTO calls(file_id, caller_id, callee, scope, form, line, snippet, target_usr, target, "
        "virtual, backend) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                file_id,
                fid(c.fn),
                c.callee,
                c.scope,
                c.form,
                c.line,
                c.snippet,
                c.target_usr,
                c.target,
                int(c.virtual),
                c.backend,
            )
            for c in facts.calls
        ],
    )
    con.executemany(
        "INSERT INTO op_sites(file_id, function_id, action, how, op_class, op_scope, target, line, "
        "snippet, backend) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [
            (file_id, fid(s.fn), s.action, s.how, s.op_class, s.op_scope, s.target, s.line, s.snippet, s.backend)
            for s in facts.op_sites
        ],
    )
    con.executemany(
        "INSERT INTO gates(file_id, function_id, kind, condition, guards, message, line, snippet, expr) "
        "VALUES (?,?,?,?,?,?,?,?,?)",
        [
            (file_id, fid(g.fn), g.kind, g.condition, json.dumps(g.guards), g.message, g.line, g.snippet, g.expr)
            for g in facts.gates
        ],
    )
    con.executemany(
        "INSERT INTO registrations(file_id, function_id, pattern, line) VALUES (?,?,?,?)",
        [(file_id, fid(r.fn), r.pattern, r.line) for r in facts.registrations],
    )
    con.executemany(
        "INSERT INTO pass_impls(file_id, how, key, class_name, line) VALUES (?,?,?,?,?)",
        [(file_id, p.how, p.key, p.class_name, p.line) for p in facts.pass_impls],
    )
    con.executemany(
        "INSERT INTO py_adders(file_id, function_id, name, builder, macro, line, snippet) VALUES (?,?,?,?,?,?,?)",
        [(file_id, fid(a.fn), a.name, a.builder, a.macro, a.line, a.snippet) for a in facts.py_adders],
    )
    con.executemany(
        "INSERT INTO py_submodules(file_id, function_id, callee, rel_path, line) VALUES (?,?,?,?,?)",
        [(file_id, fid(s.fn), s.callee, s.rel_path, s.line) for s in facts.py_submodules],
    )
    con.executemany("INSERT INTO aliases VALUES (?, ?, ?)", [(file_id, a, t) for a, t in facts.aliases])
    con.executemany("INSERT INTO namespaces VALUES (?, ?)", [(file_id, n) for n in facts.namespaces])
    con.executemany("INSERT INTO usings VALUES (?, ?)", [(file_id, u) for u in facts.usings])
    con.executemany(
        "INSERT INTO td_records(file_id, kind, name, parents, params, lets, line, end_line, snippet) "
        "VALUES (?,?,?,?,?,?,?,?,?)",
        [
            (
                file_id,
                r.kind,
                r.name,
                json.dumps(r.parents),
                json.dumps(r.params),
                json.dumps(r.lets),
                r.line,
                r.end_line,
                r.text.split("\n", 1)[0].strip()[:200],
            )
            for r in facts.td_records
        ],
    )
    con.executemany(
        "INSERT INTO pipeline_stages(file_id, backend, stage, method, condition, line) VALUES (?,?,?,?,?,?)",
        [(file_id, s.backend, s.stage, s.method, s.condition, s.line) for s in facts.pipeline_stages],
    )
    con.executemany(
        "INSERT INTO pipeline_steps(file_id, backend, method, position, adder, args, condition, line, "
        "snippet) VALUES (?,?,?,?,?,?,?,?,?)",
        [
            (file_id, s.backend, s.method, s.position, s.adder, s.args, s.condition, s.line, s.snippet)
            for s in facts.pipeline_steps
        ],
    )
    _search(con, file_id, _search_docs(facts))
    return file_id


_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def words(identifier: str) -> str:
    """`isContiguousEnough` → "is Contiguous Enough": identifiers are single FTS tokens, their words are not."""
    return " ".join(_CAMEL.findall(identifier))


def _search_docs(facts: FileFacts) -> Iterable[tuple[str, str, int, str]]:
    # (kind, name, first line, text); the text starts at `line`, so a match's offset in it gives its own line
    for f in facts.functions:
        yield "function", f.qualname, f.line, f"{f.body}\n{words(f.qualname)}"
    for g in facts.gates:
        if g.message:
            yield g.kind, g.message, g.line, f"{g.snippet} {g.condition}"
    for r in facts.td_records:
        yield f"td-{r.kind}", r.name, r.line, f"{r.text}\n{words(r.name)}"
    for s in facts.pipeline_steps:
        yield "pipeline", s.adder, s.line, f"{s.method} {s.args} {s.condition}"
