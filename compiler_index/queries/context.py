"""An open index and the lookups one query shares (file paths, pass ownership, op names), each loaded on first
use; the not-found message with close matches."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

from compiler_index import callgraph, store
from compiler_index.callgraph import FnRow
from compiler_index.queries.results import FunctionRef, Loc


@contextmanager
def connection(db: str | Path | sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """An open index for several queries in a row (a connection passed in is used as is and left open)."""
    if isinstance(db, sqlite3.Connection):
        yield db
        return
    con = store.open_index(db)
    try:
        yield con
    finally:
        con.close()


BULK_AFTER = 64  # single-row signature lookups before a Context loads them all (unless prefetched)


class Context:
    """Lookups shared by one query, each loaded on first use: file paths, pass ownership, op names; and per
    function, memoized: its row, reference, owners, callers, gates and caller paths. `explain` runs one query per
    changed op (75 at convert-triton-gpu-to-llvm of a matmul) through one Context: the same helpers recur, so
    each function's call graph is walked once."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con
        self._functions: dict[int, FnRow] = {}
        self._refs: dict[int, FunctionRef] = {}
        self._owners: dict[int, set[str]] = {}
        self._callers: dict[int, list[callgraph.CallEdge]] = {}
        self.ref_ids: dict[tuple[str, int, str], int] = {}  # (file, line, qualname) of a FunctionRef made here → id
        self.memo: dict[tuple, Any] = {}  # per-function and per-op results of the queries built on this Context
        self._sigs: dict[int, str] = {}  # signatures of prefetched functions
        self._sig_lookups = 0

    @cached_property
    def files(self) -> dict[int, str]:
        return {r[0]: r[1] for r in self.con.execute("SELECT id, path FROM files")}

    @cached_property
    def file_ids(self) -> dict[str, int]:
        return {path: i for i, path in self.files.items()}

    @cached_property
    def debug_types(self) -> dict[int, str | None]:
        return {r[0]: r[1] for r in self.con.execute("SELECT id, debug_type FROM files")}

    @cached_property
    def argument(self) -> dict[str, str]:
        return {r[0]: r[1] for r in self.con.execute("SELECT def_name, argument FROM td_passes")}

    @cached_property
    def pass_classes(self) -> dict[str, list[tuple[str, int]]]:
        out: dict[str, list[tuple[str, int]]] = {}
        for r in self.con.execute(
            "SELECT def_name, class_name, file_id FROM pass_classes WHERE class_name IS NOT NULL"
        ):
            out.setdefault(r[1], []).append((r[0], r[2]))
        return out

    @cached_property
    def pattern_passes(self) -> dict[tuple[str, int | None], set[str]]:
        """(pattern class, file of its definition or None when unresolved) → passes registering it."""
        out: dict[tuple[str, int | None], set[str]] = {}
        for r in self.con.execute("SELECT def_name, pattern, class_file_id FROM pass_patterns"):
            out.setdefault((r[1], r[2]), set()).add(r[0])
        return out

    @cached_property
    def class_files(self) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for r in self.con.execute("SELECT name, file_id FROM classes"):
            out.setdefault(r[0], set()).add(r[1])
        return out

    @cached_property
    def _pattern_files(self) -> dict[str, list[tuple[int | None, set[str]]]]:
        out: dict[str, list[tuple[int | None, set[str]]]] = {}
        for (name, f), defs in self.pattern_passes.items():
            out.setdefault(name, []).append((f, defs))
        return out

    def registered_by(self, pattern: str, file_id: int | None) -> set[str]:
        """Passes that register pattern class `pattern` as defined in `file_id` (None: any definition)."""
        out: set[str] = set()
        for f, defs in self._pattern_files.get(pattern, ()):
            if f is None or file_id is None or f == file_id:
                out |= defs
        return out

    @cached_property
    def patterns(self) -> set[str]:
        return {r[0] for r in self.con.execute("SELECT DISTINCT name FROM patterns")}

    @cached_property
    def op_by_class(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for r in self.con.execute("SELECT cpp_class, name FROM td_ops"):
            out.setdefault(r[0], []).append(r[1])
        return out

    @cached_property
    def signatures(self) -> dict[int, str]:
        """Function id → its signature, all at once (about 2.5 ms for Triton's 3,800 functions)."""
        return {r[0]: r[1] for r in self.con.execute("SELECT id, signature FROM functions")}

    def _signature(self, fn_id: int) -> str:
        # A query naming a few functions looks each up; one naming many (explain: hundreds) loads them all.
        if (sig := self._sigs.get(fn_id)) is not None:
            return sig
        self._sig_lookups += 1
        if self._sig_lookups > BULK_AFTER:
            return self.signatures.get(fn_id) or ""
        row = self.con.execute("SELECT signature FROM functions WHERE id = ?", (fn_id,)).fetchone()
        return row[0] if row and row[0] else ""

    @cached_property
    def _td_ops(self) -> dict[str, dict[str, sqlite3.Row]]:
        """td_ops by name, by def name and by C++ class: the first row in table order for each value."""
        out: dict[str, dict[str, sqlite3.Row]] = {"name": {}, "def_name": {}, "cpp_class": {}}
        for r in self.con.execute("SELECT * FROM td_ops ORDER BY rowid"):
            for key, index in out.items():
                index.setdefault(r[key], r)
        return out

    def td_op(self, op: str) -> sqlite3.Row | None:
        """The td_ops row `_resolve_op` would select for `op`: by name first, then by def name, then (a bare
        name) by C++ class."""
        for key in ("name", "def_name") + (("cpp_class",) if "." not in op else ()):
            if (row := self._td_ops[key].get(op)) is not None:
                return row
        return None

    @cached_property
    def drr_patterns(self) -> list[sqlite3.Row]:
        """The DRR patterns (a handful), in table order."""
        return self.con.execute("SELECT * FROM drr_patterns").fetchall()

    @cached_property
    def aliases(self) -> dict[str, str]:
        return {r[0]: r[1] for r in self.con.execute("SELECT alias, target FROM aliases")}

    @cached_property
    def scopes(self) -> callgraph.Scopes:
        return callgraph.Scopes(self.con)

    @cached_property
    def pass_backends(self) -> dict[str, str | None]:
        """Backend of each pass, from where its class lives: third_party/<backend>/…, None for shared code."""
        return {d: backend_of_path(self.files.get(f, "")) for entries in self.pass_classes.values() for d, f in entries}

    def backend(self, file_id: int) -> str | None:
        return backend_of_path(self.files.get(file_id, ""))

    def path_owners(self, chain: list[FnRow]) -> set[str]:
        """Passes owning a function on a call chain, less those of another backend than a function on it lives
        in: generic code reached through NVIDIA's and AMD's same-named TargetInfo runs in one backend's pass."""
        owners = set().union(*(self.owners(f) for f in chain))
        backends = {b for f in chain if (b := self.backend(f.file_id))}
        if not backends:
            return owners
        if len(backends) > 1:
            return set()  # a chain through two backends' code is an artifact of matching by name
        (backend,) = backends
        return {d for d in owners if self.pass_backends.get(d) in (None, backend)}

    @cached_property
    def file_passes(self) -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        for entries in self.pass_classes.values():
            for d, f in entries:
                out.setdefault(f, set()).add(d)
        return out

    def loc(self, file_id: int, line: int, snippet: str = "") -> Loc:
        return Loc(self.files.get(file_id, "?"), line, snippet or "")

    def fn_ref(self, fn: FnRow) -> FunctionRef:
        ref = self._refs.get(fn.id)
        if ref is None:
            ref = FunctionRef(fn.qualname, self.loc(fn.file_id, fn.line, self._signature(fn.id)), fn.end_line)
            self._refs[fn.id] = ref
            self.ref_ids[(ref.loc.file, ref.loc.line, ref.name)] = fn.id
        return ref

    def prefetch(self, fn_ids: Iterable[int]) -> None:
        """Load the rows and signatures of these functions in two queries (a query about to name them one by
        one)."""
        missing = sorted({i for i in fn_ids if i is not None and i not in self._functions})
        for chunk in range(0, len(missing), 500):
            ids = missing[chunk : chunk + 500]
            for fn in callgraph.functions(self.con, ids):
                self._functions[fn.id] = fn
            marks = ",".join("?" * len(ids))
            for fn_id, sig in self.con.execute(f"SELECT id, signature FROM functions WHERE id IN ({marks})", ids):
                self._sigs[fn_id] = sig or ""

    def function(self, fn_id: int) -> FnRow:
        fn = self._functions.get(fn_id)
        if fn is None:
            fn = self._functions[fn_id] = callgraph.function(self.con, fn_id)
        return fn

    def fn_ref_by_id(self, fn_id: int | None) -> tuple[FnRow | None, FunctionRef | None]:
        if fn_id is None:
            return None, None
        fn = self.function(fn_id)
        return fn, self.fn_ref(fn)

    def callers(self, fn: FnRow) -> list[callgraph.CallEdge]:
        edges = self._callers.get(fn.id)
        if edges is None:
            edges = self._callers[fn.id] = callgraph.callers(self.con, fn, scopes=self.scopes)
        return edges

    def owners(self, fn: FnRow) -> set[str]:
        """Pass def names that run `fn`: methods of their pass class, methods of patterns they register."""
        hit = self._owners.get(fn.id)
        if hit is None:
            hit = self._owners[fn.id] = self._find_owners(fn)
        return hit

    def _find_owners(self, fn: FnRow) -> set[str]:
        out: set[str] = set()
        cands = self.pass_classes.get(fn.cls or "", [])
        out |= {d for d, file_id in cands if len(cands) == 1 or file_id == fn.file_id}
        if fn.cls:
            # a method defined where its class is: that class; defined out of line elsewhere: any of that name
            defined_here = fn.file_id in self.class_files.get(fn.cls, set())
            out |= self.registered_by(fn.cls, fn.file_id if defined_here else None)
        return out

    def file_owners(self, file_id: int) -> set[str]:
        """Passes whose pass class is defined in the file: a helper there most likely serves them."""
        return self.file_passes.get(file_id, set())

    def pass_args(self, def_names: set[str]) -> list[str]:
        return sorted(self.argument.get(d) or d for d in def_names)

    def expand_scope(self, scope: str) -> str:
        head, sep, rest = scope.partition("::")
        return (self.aliases.get(head, head) + sep + rest).lstrip(":")


def backend_of_path(path: str) -> str | None:
    """third_party/amd/lib/… → "amd"; shared code → None."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "third_party" else None


def not_found(con: sqlite3.Connection, what: str, q: str) -> str:
    words = [w for w in re.split(r"[^A-Za-z0-9]+", q) if len(w) > 2]
    close: list[str] = []
    if what == "pass":
        for w in words:
            close += [
                r[0] for r in con.execute("SELECT argument FROM td_passes WHERE argument LIKE ? LIMIT 5", (f"%{w}%",))
            ]
            close += [
                r[0] for r in con.execute("SELECT qualname FROM adders WHERE qualname LIKE ? LIMIT 5", (f"%{w}%",))
            ]
    elif what == "op":
        dialect = q.partition(".")[0] if "." in q else None
        for w in words:
            if w != dialect:  # suggest ops of the asked dialect (or any, for a bare name) that share a word
                close += [
                    r[0]
                    for r in con.execute(
                        "SELECT name FROM td_ops WHERE name LIKE ? AND (? IS NULL OR dialect = ?) LIMIT 5",
                        (f"%{w}%", dialect, dialect),
                    )
                ]
    else:
        for w in words:
            close += [
                r[0]
                for r in con.execute(
                    "SELECT DISTINCT qualname FROM functions WHERE qualname LIKE ? LIMIT 5", (f"%{w}%",)
                )
            ]
    hint = f"; close matches: {', '.join(dict.fromkeys(close))}" if close else ""
    return f"no {what} named {q!r} in the index{hint}"
