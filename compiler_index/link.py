"""Derived tables: what joins facts across files.

* TableGen: records resolved through their class chains (`TTG_ConvertLayoutOp : TTG_Op<"convert_layout">`,
  `class TTG_Op<string mnemonic> : Op<TritonGPU_Dialect, mnemonic>`, `TritonGPU_Dialect` `let name = "ttg"`) into
  dialects, ops (`ttg.convert_layout` ↔ C++ `ConvertLayoutOp`), passes and DRR patterns.
* C++ pattern classes: classes whose bases reach a rewrite/conversion pattern base, with their root op (by base
  names through the indexed classes; for classes libclang read, through all their ancestors first).
* Pass ↔ C++: `impl::{Def}Base` classes and `GEN_PASS_DEF_{DEF}` macros.
* Python adders: pybind submodule paths (`passes.ttgpuir`) and the pass each adder's factory creates.
* Pass ↔ patterns: functions that `patterns.add<P>` reached from a pass class within a few calls.
* Caller paths: how callers reach each function that creates or erases an op, as `creators`/`erasers` report
  them; walked once here so a query (and `explain`, one query per changed op) reads them instead of walking
  the call graph.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

from compiler_index import callgraph
from compiler_index.store import DERIVED_NAMES, DERIVED_TABLES

PATTERN_BASES = frozenset(
    {
        "OpRewritePattern",
        "OpConversionPattern",
        "ConvertOpToLLVMPattern",
        "RewritePattern",
        "OpInterfaceRewritePattern",
        "ConversionPattern",
        "OpInterfaceConversionPattern",
        "OpTraitRewritePattern",
        "ConvertToLLVMPattern",
        "OpTraitConversionPattern",
    }
)
PASS_CLASSES = frozenset({"Pass", "InterfacePass"})
DRR_CLASSES = frozenset({"Pat", "Pattern"})
REGISTRATION_DEPTH = 3  # calls between a pass class method and the function that adds a pattern


def relink(con: sqlite3.Connection) -> None:
    for name in DERIVED_NAMES:
        con.execute(f"DROP TABLE IF EXISTS {name}")
    con.executescript(DERIVED_TABLES)
    resolve_namespaces(con)
    _tablegen(con)
    _patterns(con)
    _pass_classes(con)
    _adders(con)
    _pass_patterns(con)
    _caller_paths(con)


def _caller_paths(con: sqlite3.Connection) -> None:
    from compiler_index.queries.ops import precompute_caller_paths  # the queries build on these tables

    precompute_caller_paths(con)


# ---- C++ names -----------------------------------------------------------------------------------------------------
def resolve_namespaces(con: sqlite3.Connection) -> None:
    """Settle `X::f` definitions: X is a class when some file defines a class X, a namespace when some file opens
    a namespace X (or aliases one), else the extractor's guess (upper case: class) stands. (libclang's rows know.)"""
    namespaces: set[str] = {r[0] for r in con.execute("SELECT DISTINCT alias FROM aliases")}
    for (name,) in con.execute("SELECT DISTINCT name FROM namespaces"):
        namespaces.update(name.split("::"))
    classes = {r[0] for r in con.execute("SELECT DISTINCT name FROM classes")}
    updates = []
    for r in con.execute(
        "SELECT id, name, cls, ns, qual, cls_guess, ns_decl FROM functions WHERE qual != '' AND backend != 'libclang'"
    ):
        qual = r["qual"].lstrip(":")
        last = qual.rsplit("::", 1)[-1]
        if last in classes or (last not in namespaces and r["cls_guess"]):
            cls, ns = last, r["ns_decl"]
        else:
            absolute = not r["ns_decl"] or qual.split("::")[0] == r["ns_decl"].split("::")[0]
            cls, ns = None, qual if absolute else f"{r['ns_decl']}::{qual}"
        if (cls, ns) != (r["cls"], r["ns"]):
            updates.append((cls, ns, f"{cls}::{r['name']}" if cls else r["name"], r["id"]))
    con.executemany("UPDATE functions SET cls = ?, ns = ?, qualname = ? WHERE id = ?", updates)


# ---- TableGen ------------------------------------------------------------------------------------------------------
class _Td:
    def __init__(self, con: sqlite3.Connection):
        self.classes: dict[str, sqlite3.Row] = {}
        self.defs: list[sqlite3.Row] = []
        for r in con.execute("SELECT id, file_id, kind, name, parents, params, lets, line, snippet FROM td_records"):
            if r["kind"] == "class":
                self.classes.setdefault(r["name"], r)
            else:
                self.defs.append(r)
        self.def_by_name = {r["name"]: r for r in self.defs}

    def ancestors(self, rec: sqlite3.Row, bindings: dict[str, Any], depth: int = 0) -> Iterator[tuple[str, list]]:
        """(class name, arguments with template parameters substituted), depth first, nearest first."""
        if depth > 12:
            return
        for parent in json.loads(rec["parents"]):
            args = [_subst(a, bindings) for a in parent["args"]]
            yield parent["name"], args
            cls = self.classes.get(parent["name"])
            if cls is not None:
                yield from self.ancestors(cls, dict(zip(json.loads(cls["params"]), args)), depth + 1)

    def lets(self, rec: sqlite3.Row, depth: int = 0) -> dict[str, Any]:
        """Let fields, those of the record overriding its classes'."""
        merged: dict[str, Any] = {}
        if depth <= 12:
            for parent in reversed(json.loads(rec["parents"])):
                cls = self.classes.get(parent["name"])
                if cls is not None:
                    merged.update(self.lets(cls, depth + 1))
        merged.update(json.loads(rec["lets"]))
        return merged


def _subst(value: Any, bindings: dict[str, Any]) -> Any:
    if isinstance(value, dict) and "id" in value and len(value) == 1:
        return bindings.get(value["id"], value)
    if isinstance(value, list):
        return [_subst(v, bindings) for v in value]
    return value


def _ident(value: Any) -> str | None:
    return value.get("id") if isinstance(value, dict) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def cpp_op_class(def_name: str) -> str:
    """MLIR's rule: the C++ op class is the def name without its dialect prefix (up to the first `_`)."""
    prefix, _, rest = def_name.partition("_")
    return rest or prefix


def _tablegen(con: sqlite3.Connection) -> None:
    td = _Td(con)
    dialects: dict[str, tuple[str, str]] = {}
    kinds: dict[int, tuple[str, list]] = {}
    for rec in td.defs:
        for name, args in td.ancestors(rec, {}):
            if name in PASS_CLASSES or name == "Op" or name == "Dialect" or name in DRR_CLASSES:
                kinds[rec["id"]] = (name, args)
                break
    for rec in td.defs:
        kind = kinds.get(rec["id"])
        if kind and kind[0] == "Dialect":
            lets = td.lets(rec)
            dialects[rec["name"]] = (_str(lets.get("name")) or "", _str(lets.get("cppNamespace")) or "")
            con.execute(
                "INSERT INTO td_dialects VALUES (?, ?, ?, ?, ?)",
                (rec["name"], *dialects[rec["name"]], rec["file_id"], rec["line"]),
            )
    op_names: dict[str, str] = {}
    for rec in td.defs:
        kind = kinds.get(rec["id"])
        if kind is None:
            continue
        name, args = kind
        if name == "Op" and len(args) >= 2 and _str(args[1]) is not None:
            dialect, cpp_ns = dialects.get(_ident(args[0]) or "", ("", ""))
            full = f"{dialect}.{args[1]}" if dialect else args[1]
            op_names[rec["name"]] = full
            summary = _str(td.lets(rec).get("summary")) or ""
            con.execute(
                "INSERT INTO td_ops VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    rec["name"],
                    full,
                    dialect,
                    args[1],
                    cpp_op_class(rec["name"]),
                    cpp_ns,
                    summary,
                    rec["file_id"],
                    rec["line"],
                    rec["snippet"],
                ),
            )
        elif name in PASS_CLASSES and args and _str(args[0]):
            lets = td.lets(rec)
            options = [_option(o) for o in lets.get("options", []) if isinstance(o, dict)]
            con.execute(
                "INSERT OR REPLACE INTO td_passes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    rec["name"],
                    args[0],
                    _str(args[1]) if len(args) > 1 else None,
                    _str(lets.get("summary")) or "",
                    _str(lets.get("description")) or "",
                    json.dumps(options),
                    json.dumps([d for d in lets.get("dependentDialects", []) if isinstance(d, str)]),
                    _str(lets.get("constructor")),
                    rec["file_id"],
                    rec["line"],
                    rec["snippet"],
                ),
            )
    for rec in td.defs:
        kind = kinds.get(rec["id"])
        if kind is None or kind[0] not in DRR_CLASSES or len(kind[1]) < 2:
            continue
        src, results = kind[1][0], kind[1][1]
        root = _dag_ops(src)[:1]
        made = _dag_ops(results)
        con.execute(
            "INSERT INTO drr_patterns VALUES (?, ?, ?, ?, ?, ?)",
            (
                rec["name"],
                op_names.get(root[0], root[0]) if root else None,
                json.dumps([op_names.get(m, m) for m in made]),
                rec["file_id"],
                rec["line"],
                rec["snippet"],
            ),
        )


def _option(o: dict[str, Any]) -> dict[str, Any]:
    args = [a if isinstance(a, str | int) else json.dumps(a) for a in o.get("args", [])]
    keys = ["name", "argument", "type", "default", "description"]
    if o.get("class") == "ListOption":
        keys = ["name", "argument", "type", "description"]
    return {"kind": o.get("class"), **dict(zip(keys, args))}


def _dag_ops(value: Any) -> list[str]:
    """Operator identifiers of a DRR dag (or list of dags), outermost first."""
    out: list[str] = []
    if isinstance(value, list):
        for v in value:
            out.extend(_dag_ops(v))
    elif isinstance(value, dict) and "dag" in value:
        op = _ident(value["dag"])
        if op:
            out.append(op)
        for a in value.get("args", []):
            out.extend(_dag_ops(a))
    return out


# ---- C++ patterns --------------------------------------------------------------------------------------------------
def _patterns(con: sqlite3.Connection) -> None:
    classes: dict[str, list[dict[str, Any]]] = {}
    for r in con.execute(
        "SELECT c.id, c.name, c.file_id, c.line, c.end_line, c.root_hint, c.tparams, c.ancestors, "
        "b.name AS base, b.targs FROM classes c LEFT JOIN class_bases b ON b.class_id = c.id "
        "ORDER BY c.id, b.position"
    ):
        entry = classes.setdefault(r["name"], [])
        if not entry or entry[-1]["id"] != r["id"]:
            entry.append(
                {
                    "id": r["id"],
                    "file_id": r["file_id"],
                    "line": r["line"],
                    "end_line": r["end_line"],
                    "root_hint": r["root_hint"],
                    "tparams": json.loads(r["tparams"] or "[]"),
                    "bases": [],
                    "ancestors": json.loads(r["ancestors"] or "[]"),
                }
            )
        if r["base"]:
            entry[-1]["bases"].append((r["base"], json.loads(r["targs"] or "[]")))
    op_classes = {r[0] for r in con.execute("SELECT DISTINCT cpp_class FROM td_ops")}

    def reach(name: str, seen: set[str]) -> tuple[str | None, str | None]:
        """(pattern base reached, first op-like template argument on the way)."""
        for cls in classes.get(name, []):
            root = None
            for base, targs in cls["ancestors"]:  # libclang's: through aliases and headers the index lacks
                root = root or next((t for t in targs if _op_like(t, cls["tparams"], op_classes)), None)
                if base in PATTERN_BASES:
                    return base, root
            for base, targs in cls["bases"]:
                if base in seen:
                    continue
                root = next((t for t in targs if _op_like(t, cls["tparams"], op_classes)), None)
                if base in PATTERN_BASES:
                    return base, root
                seen.add(base)
                found, deeper = reach(base, seen)
                if found:
                    return found, root or deeper
        return None, None

    for name, defs in classes.items():
        base, root = reach(name, {name})
        if base is None:
            continue
        for cls in defs:
            root_text = root or cls["root_hint"]
            scope, _, root_cls = (root_text or "").rpartition("::")
            con.execute(
                "INSERT INTO patterns VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (cls["id"], name, base, root_cls or None, scope, cls["file_id"], cls["line"], cls["end_line"]),
            )


def _op_like(targ: str, tparams: list[str], op_classes: set[str]) -> bool:
    name = re.sub(r"<.*>", "", targ).strip().rsplit("::", 1)[-1]
    return name not in tparams and (name in op_classes or (name.endswith("Op") and name[:1].isupper()))


# ---- passes ↔ C++ --------------------------------------------------------------------------------------------------
def _pass_classes(con: sqlite3.Connection) -> None:
    by_upper = {r[0].upper(): r[0] for r in con.execute("SELECT def_name FROM td_passes")}
    for r in con.execute("SELECT file_id, how, key, class_name, line FROM pass_impls").fetchall():
        def_name = r["key"] if r["how"] == "impl-base" else by_upper.get(r["key"])
        if def_name:
            con.execute(
                "INSERT INTO pass_classes VALUES (?, ?, ?, ?, ?)",
                (def_name, r["class_name"], r["how"], r["file_id"], r["line"]),
            )


# ---- Python adders -------------------------------------------------------------------------------------------------
_INIT_BACKEND = re.compile(r"init_triton_(\w+)")


def _module_paths(con: sqlite3.Connection) -> dict[str, str]:
    """Module path of each pybind init function: `init_triton_passes_ttgpuir` → `passes.ttgpuir`."""
    edges: dict[str, tuple[str, str]] = {}
    for r in con.execute(
        "SELECT s.callee, s.rel_path, f.name FROM py_submodules s LEFT JOIN functions f ON f.id = s.function_id"
    ):
        edges.setdefault(r["callee"], (r["name"] or "", r["rel_path"]))
    files = {
        r["name"]: r["path"]
        for r in con.execute(
            "SELECT f.name, fl.path FROM functions f JOIN files fl ON fl.id = f.file_id WHERE f.name LIKE 'init%'"
        )
    }

    def path(name: str, depth: int = 0) -> str:
        if name in edges and depth < 10:
            caller, rel = edges[name]
            return ".".join(p for p in (path(caller, depth + 1), rel) if p)
        # backends are initialised by main.cc's INIT_BACKEND macro: init_triton_<name>(m.def_submodule("<name>"))
        m = _INIT_BACKEND.fullmatch(name)
        if m and files.get(name, "").startswith(f"third_party/{m.group(1)}/"):
            return m.group(1)
        return ""

    return {name: path(name) for name in set(edges) | set(files)}


def _adders(con: sqlite3.Connection) -> None:
    paths = _module_paths(con)
    passes = con.execute("SELECT def_name, constructor FROM td_passes").fetchall()
    by_factory: dict[str, tuple[str, str]] = {}
    for p in passes:
        by_factory.setdefault(f"create{p['def_name']}", (p["def_name"], "factory"))
        m = re.search(r"(\w+)\s*\([^()]*\)\s*$", p["constructor"] or "")
        if m:
            by_factory.setdefault(m.group(1), (p["def_name"], "constructor"))
    fuzzy = {_norm(p["def_name"]): p["def_name"] for p in passes}

    def resolve(builder: str, depth: int = 0) -> tuple[str | None, str]:
        if builder in by_factory:
            return by_factory[builder]
        if _norm(builder) in fuzzy:
            return fuzzy[_norm(builder)], "name"
        if depth < 2:  # a wrapper: static std::unique_ptr<Pass> createXWrapper(…) { … return createX(options); }
            for r in con.execute(
                "SELECT DISTINCT c.callee FROM calls c JOIN functions f ON f.id = c.caller_id "
                "WHERE f.name = ? AND c.callee LIKE 'create%'",
                (builder,),
            ):
                found, _ = resolve(r["callee"], depth + 1)
                if found:
                    return found, "wrapper"
        return None, ""

    for r in con.execute(
        "SELECT a.*, f.name AS fn_name FROM py_adders a LEFT JOIN functions f ON f.id = a.function_id"
    ).fetchall():
        module = paths.get(r["fn_name"] or "", "")
        def_name, how = resolve(r["builder"])
        con.execute(
            "INSERT INTO adders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                f"{module}.{r['name']}" if module else r["name"],
                r["name"],
                module,
                r["builder"],
                def_name,
                how,
                r["file_id"],
                r["line"],
                r["snippet"],
            ),
        )


def _norm(name: str) -> str:
    name = name.removeprefix("create").removesuffix("Pass")
    return name.lower()


# ---- passes ↔ patterns ---------------------------------------------------------------------------------------------
def _pass_patterns(con: sqlite3.Connection) -> None:
    pass_of_class: dict[str, list[tuple[str, int]]] = {}
    for r in con.execute("SELECT def_name, class_name, file_id FROM pass_classes WHERE class_name IS NOT NULL"):
        pass_of_class.setdefault(r["class_name"], []).append((r["def_name"], r["file_id"]))

    def owners(f: callgraph.FnRow) -> set[str]:
        """Passes whose class `f` is a method of (the class's own file decides between same-named classes)."""
        cands = pass_of_class.get(f.cls or "", [])
        return {d for d, file_id in cands if len(cands) == 1 or file_id == f.file_id}

    class_files: dict[str, set[int]] = {}
    for r in con.execute("SELECT name, file_id FROM classes"):
        class_files.setdefault(r["name"], set()).add(r["file_id"])

    def class_file(pattern: str, registered_in_file: int) -> int | None:
        """The file of the class `patterns.add<pattern>` means: the registering file's own class of that name,
        else the only one; None when several files define it and the registering file none."""
        files = class_files.get(pattern, set())
        if registered_in_file in files:
            return registered_in_file
        return next(iter(files)) if len(files) == 1 else None

    scopes = callgraph.Scopes(con)
    by_function: dict[int, set[str]] = {}
    for r in con.execute("SELECT pattern, function_id FROM registrations WHERE function_id IS NOT NULL"):
        by_function.setdefault(r["function_id"], set()).add(r["pattern"])
    for fn_id, patterns in by_function.items():
        start = callgraph.function(con, fn_id)
        frontier, seen = [start], {start.id}
        done: set[str] = set()
        for depth in range(REGISTRATION_DEPTH + 1):
            nxt = []
            for f in frontier:
                found = owners(f) - done
                done |= found
                for def_name in sorted(found):
                    con.executemany(
                        "INSERT INTO pass_patterns VALUES (?, ?, ?, ?, ?)",
                        [(def_name, p, class_file(p, start.file_id), fn_id, depth) for p in sorted(patterns)],
                    )
                if owners(f):
                    continue
                for e in callgraph.callers(con, f, scopes=scopes):
                    if e.caller.id not in seen and not e.by_name:
                        seen.add(e.caller.id)
                        nxt.append(e.caller)
            frontier = nxt
            if not frontier:
                break
