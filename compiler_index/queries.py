"""Constraint queries over a compiler index. Pure: a database path or connection in, dataclasses out.

Every answer carries file:line and the source line (`Loc`). Paths are relative to the indexed root (for a Triton
checkout: `lib/Dialect/TritonGPU/Transforms/Coalesce.cpp`; for the installed package: `triton/backends/…`).

    from compiler_index import queries as q
    q.pass_info("index.db", "tritongpu-remove-layout-conversions")
    q.creators("index.db", "ttg.convert_layout")       # direct sites and call paths, with owning passes
    q.conditions("index.db", "BlockedToMMA")            # its failure() guards, remarks, asserts, …
    q.remarks("index.db", "Warning: vectorization fails vec = 1 origin vec = 4 numElems = 4")
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from compiler_index import callgraph, store
from compiler_index.callgraph import FnRow

CALL_DEPTH = 4  # callers followed from a creation/erase site
MAX_PATHS = 8  # call paths kept per function
PATH_BUDGET = 256  # partial call chains followed per level
REMARK_KINDS = ("remark", "warning", "error", "match-failure", "fatal", "debug", "assert")


class QueryError(LookupError):
    """Nothing in the index matches; the message says what was tried and what is close."""


# ---- results -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Loc:
    file: str
    line: int
    snippet: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class FunctionRef:
    name: str  # qualified: BlockedToMMA::matchAndRewrite
    loc: Loc  # the definition (snippet: its signature)
    end_line: int


@dataclass
class Adder:
    qualname: str  # passes.ttgpuir.add_remove_layout_conversions
    builder: str  # the C++ factory it calls
    match: str  # how the factory was tied to the pass: factory | constructor | wrapper | name | "" (none)
    loc: Loc


@dataclass
class PipelineUse:
    backend: str
    stage: str  # ttgir, … ("" when add_stages does not name the method)
    method: str  # make_ttgir
    position: int  # order among the adders the method calls
    adder: str
    args: str
    condition: str  # "" when unconditional
    loc: Loc


@dataclass
class PatternRef:
    name: str
    base: str  # OpRewritePattern, ConvertOpToLLVMPattern, …
    root_op: str | None  # ttg.convert_layout, or the C++ class when no TableGen op matches
    loc: Loc
    match_fn: FunctionRef | None  # matchAndRewrite (or rewrite/match)
    registered_at: Loc | None = None


@dataclass
class PassInfo:
    def_name: str | None
    argument: str | None
    summary: str = ""
    description: str = ""
    anchor: str | None = None
    options: list[dict[str, Any]] = field(default_factory=list)
    dependent_dialects: list[str] = field(default_factory=list)
    td: Loc | None = None
    gen_pass_def: list[Loc] = field(default_factory=list)
    classes: list[Loc] = field(default_factory=list)  # the C++ pass class (snippet: its head)
    methods: list[FunctionRef] = field(default_factory=list)
    adders: list[Adder] = field(default_factory=list)
    pipeline: list[PipelineUse] = field(default_factory=list)
    patterns: list[PatternRef] = field(default_factory=list)


@dataclass
class OpInfo:
    name: str  # as asked, or the mnemonic when resolved: ttg.convert_layout
    cpp_class: str
    cpp_namespace: str
    resolved_by: str  # tablegen | class-name | upstream-name (an MLIR dialect op, matched by its C++ class name)
    td: Loc | None = None
    summary: str = ""


@dataclass
class Hop:
    function: FunctionRef
    call: Loc | None  # where this function calls the next one on the path (None for the last)


@dataclass
class CallPath:
    hops: list[Hop]  # outermost caller first, ending at the function that holds the site
    passes: list[str]  # pass arguments owning a function on the path


@dataclass
class Site:
    action: str  # create | erase
    how: str  # X::create, create<X>, replaceOpWithNewOp<X>, eraseOp, replaceOp, erase, rauw, fold, drr
    loc: Loc
    function: FunctionRef | None
    pattern: str | None  # the pattern class the function belongs to
    target: str = ""  # erase sites: the expression erased
    ambiguous: bool = False  # unqualified class name that several dialects define
    passes: list[str] = field(default_factory=list)  # pass arguments that run this code (directly or via a path)
    direct_passes: list[str] = field(default_factory=list)  # … whose class/patterns hold `function` (or its file)
    paths: list[CallPath] = field(default_factory=list)  # how callers reach `function`
    paths_omitted: int = 0  # further call paths found beyond MAX_PATHS


@dataclass
class OpSites:
    op: OpInfo
    action: str
    sites: list[Site]


@dataclass
class GateInfo:
    kind: str
    condition: str
    guards: list[str]
    message: str
    loc: Loc
    function: FunctionRef | None
    via: str | None = None  # set for gates found in a callee: the target function that calls it


@dataclass
class Conditions:
    symbol: str
    targets: list[FunctionRef]
    gates: list[GateInfo]
    notes: list[str] = field(default_factory=list)  # what the symbol resolved to (pattern root op, passes)


@dataclass
class RemarkMatch:
    kind: str
    message: str
    condition: str
    loc: Loc
    function: FunctionRef | None
    score: float  # share of the message's literal text found in the query (1.0: all of it)
    passes: list[str] = field(default_factory=list)
    debug_type: str | None = None  # for `debug` messages: the -debug-only / TRITON_LLVM_DEBUG_ONLY name


@dataclass
class CallEdge:
    caller: FunctionRef
    callee: FunctionRef | None  # None: not an indexed function (MLIR/LLVM API, macro, …)
    callee_name: str
    call: Loc
    by_name: bool


@dataclass
class SearchHit:
    kind: str
    name: str
    loc: Loc
    snippet: str


def to_json(value: Any) -> Any:
    """Any result (dataclass, list of them) as JSON-ready data."""
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    return value


# ---- connection and shared lookups ---------------------------------------------------------------------------------
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


class _Ctx:
    """Lookups shared by one query, each loaded on first use: file paths, pass ownership, op names."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con

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

    def registered_by(self, pattern: str, file_id: int | None) -> set[str]:
        """Passes that register pattern class `pattern` as defined in `file_id` (None: any definition)."""
        out = set(self.pattern_passes.get((pattern, None), set()))
        for (name, f), defs in self.pattern_passes.items():
            if name == pattern and f is not None and (file_id is None or f == file_id):
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
        sig = self.con.execute("SELECT signature FROM functions WHERE id = ?", (fn.id,)).fetchone()
        return FunctionRef(fn.qualname, self.loc(fn.file_id, fn.line, sig[0] if sig else ""), fn.end_line)

    def fn_ref_by_id(self, fn_id: int | None) -> tuple[FnRow | None, FunctionRef | None]:
        if fn_id is None:
            return None, None
        fn = callgraph.function(self.con, fn_id)
        return fn, self.fn_ref(fn)

    def owners(self, fn: FnRow) -> set[str]:
        """Pass def names that run `fn`: methods of their pass class, methods of patterns they register."""
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


# ---- pass ----------------------------------------------------------------------------------------------------------
def pass_info(db: str | Path | sqlite3.Connection, name: str) -> list[PassInfo]:
    """A pass by argument (`tritongpu-coalesce`), TableGen def, C++ class, or Python adder (`add_coalesce`,
    `passes.ttgpuir.add_coalesce`): its .td definition, C++ implementation, adders, pipeline positions, patterns."""
    with connection(db) as con:
        ctx = _Ctx(con)
        out = []
        for part in [p.strip() for p in name.split(",") if p.strip()]:  # composite adders print "a,b"
            out.extend(_pass_info(ctx, part))
        return out


def _pass_info(ctx: _Ctx, name: str) -> list[PassInfo]:
    con = ctx.con
    q = name.removeprefix("triton._C.libtriton.")
    defs = [r[0] for r in con.execute("SELECT def_name FROM td_passes WHERE argument = ? OR def_name = ?", (q, q))]
    if not defs:
        defs = [r[0] for r in con.execute("SELECT DISTINCT def_name FROM pass_classes WHERE class_name = ?", (q,))]
    adder_rows = []
    if not defs:
        adder_rows = con.execute(
            "SELECT * FROM adders WHERE qualname = ? OR name = ? OR qualname LIKE ?", (q, q, f"%.{q}")
        ).fetchall()
        defs = sorted({r["def_name"] for r in adder_rows if r["def_name"]})
    if not defs and not adder_rows:
        raise QueryError(_not_found(con, "pass", q))
    infos = [_pass_for_def(ctx, d) for d in defs]
    for r in adder_rows:  # adders of passes TableGen does not define (upstream MLIR passes)
        if not r["def_name"]:
            info = PassInfo(
                def_name=None,
                argument=None,
                summary="not a Triton TableGen pass (an upstream MLIR pass or a hand-built pipeline)",
            )
            info.adders = [_adder(ctx, r)]
            info.pipeline = _pipeline(ctx, [r["qualname"]])
            infos.append(info)
    return infos


def _adder(ctx: _Ctx, r: sqlite3.Row) -> Adder:
    return Adder(r["qualname"], r["builder"], r["match"] or "", ctx.loc(r["file_id"], r["line"], r["snippet"]))


def _pipeline(ctx: _Ctx, adders: list[str]) -> list[PipelineUse]:
    if not adders:
        return []
    rows = ctx.con.execute(
        f"SELECT s.*, g.stage FROM pipeline_steps s LEFT JOIN pipeline_stages g ON g.file_id = s.file_id AND "
        f"g.method = s.method WHERE s.adder IN ({','.join('?' * len(adders))}) ORDER BY s.backend, s.file_id, s.line",
        adders,
    ).fetchall()
    seen, out = set(), []
    for r in rows:
        if r["id"] in seen:  # a method mapped to two stage keys appears once
            continue
        seen.add(r["id"])
        out.append(
            PipelineUse(
                r["backend"],
                r["stage"] or "",
                r["method"],
                r["position"],
                r["adder"],
                r["args"],
                r["condition"],
                ctx.loc(r["file_id"], r["line"], r["snippet"]),
            )
        )
    return out


def _pass_for_def(ctx: _Ctx, def_name: str) -> PassInfo:
    con = ctx.con
    p = con.execute("SELECT * FROM td_passes WHERE def_name = ?", (def_name,)).fetchone()
    info = PassInfo(
        def_name=def_name,
        argument=p["argument"],
        summary=p["summary"],
        description=p["description"],
        anchor=p["anchor"],
        options=json.loads(p["options"]),
        dependent_dialects=json.loads(p["dependent_dialects"]),
        td=ctx.loc(p["file_id"], p["line"], p["snippet"]),
    )
    classes = con.execute("SELECT * FROM pass_classes WHERE def_name = ?", (def_name,)).fetchall()
    for c in classes:
        if c["how"] == "gen-pass-def":
            info.gen_pass_def.append(ctx.loc(c["file_id"], c["line"], f"#define GEN_PASS_DEF_{def_name.upper()}"))
    for c in classes:
        if c["how"] != "impl-base":
            continue
        info.classes.append(
            ctx.loc(c["file_id"], c["line"], f"{c['class_name']} : impl::{def_name}Base<{c['class_name']}>")
        )
        for r in con.execute(
            "SELECT id FROM functions WHERE cls = ? AND file_id = ? ORDER BY line", (c["class_name"], c["file_id"])
        ):
            info.methods.append(ctx.fn_ref(callgraph.function(con, r[0])))
    adder_rows = con.execute("SELECT * FROM adders WHERE def_name = ? ORDER BY qualname", (def_name,)).fetchall()
    info.adders = [_adder(ctx, r) for r in adder_rows]
    info.pipeline = _pipeline(ctx, [r["qualname"] for r in adder_rows])
    for r in con.execute(
        "SELECT DISTINCT pattern, class_file_id, registered_in FROM pass_patterns WHERE def_name = ? ORDER BY pattern",
        (def_name,),
    ):
        info.patterns.extend(_pattern_refs(ctx, r["pattern"], r["registered_in"], r["class_file_id"]))
    return info


def _pattern_refs(
    ctx: _Ctx, name: str, registered_in: int | None = None, file_id: int | None = None
) -> list[PatternRef]:
    con = ctx.con
    reg = None
    if registered_in is not None:
        row = con.execute(
            "SELECT file_id, line FROM registrations WHERE function_id = ? AND pattern = ? LIMIT 1",
            (registered_in, name),
        ).fetchone()
        reg = ctx.loc(row["file_id"], row["line"]) if row else None
    out = []
    for p in con.execute(
        "SELECT * FROM patterns WHERE name = ? AND (? IS NULL OR file_id = ?)", (name, file_id, file_id)
    ).fetchall():
        fn_row = con.execute(
            "SELECT id FROM functions WHERE cls = ? AND file_id = ? AND name IN "
            "('matchAndRewrite', 'rewrite', 'match') ORDER BY line LIMIT 1",
            (name, p["file_id"]),
        ).fetchone()
        root = None
        if p["root_class"]:
            ops = ctx.op_by_class.get(p["root_class"], [])
            root = ops[0] if len(ops) == 1 else (f"{p['root_scope']}::{p['root_class']}".lstrip(":"))
        out.append(
            PatternRef(
                name,
                p["base"],
                root,
                ctx.loc(p["file_id"], p["line"], f"{name} : {p['base']}<…>"),
                ctx.fn_ref(callgraph.function(con, fn_row[0])) if fn_row else None,
                reg,
            )
        )
    if not out:  # a DRR pattern
        for d in con.execute("SELECT * FROM drr_patterns WHERE def_name = ?", (name,)):
            out.append(
                PatternRef(name, "Pat (DRR)", d["root_op"], ctx.loc(d["file_id"], d["line"], d["snippet"]), None, reg)
            )
    return out


def _not_found(con: sqlite3.Connection, what: str, q: str) -> str:
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


# ---- ops -----------------------------------------------------------------------------------------------------------
def resolve_op(db: str | Path | sqlite3.Connection, op: str) -> OpInfo:
    with connection(db) as con:
        return _resolve_op(con, op)


def _resolve_op(con: sqlite3.Connection, op: str) -> OpInfo:
    r = con.execute(
        "SELECT * FROM td_ops WHERE name = ? OR def_name = ? ORDER BY name = ? DESC LIMIT 1", (op, op, op)
    ).fetchone()
    if r is None and "." not in op:
        r = con.execute("SELECT * FROM td_ops WHERE cpp_class = ? LIMIT 1", (op,)).fetchone()
    if r is not None:
        dialect_file = con.execute("SELECT path FROM files WHERE id = ?", (r["file_id"],)).fetchone()[0]
        return OpInfo(
            r["name"],
            r["cpp_class"],
            r["cpp_namespace"],
            "tablegen",
            Loc(dialect_file, r["line"], r["snippet"]),
            r["summary"],
        )
    if "." in op:  # an op of a dialect not in the index (arith, scf, llvm, nvvm, …): match C++ class names
        dialect, _, mnemonic = op.partition(".")
        for want in _upstream_class_keys(mnemonic):
            row = con.execute(
                "SELECT op_class FROM op_sites WHERE lower(op_class) = ? AND lower(op_scope) LIKE ? LIMIT 1",
                (want, f"%{dialect.lower()}"),
            ).fetchone()
            if row is not None:
                return OpInfo(op, row[0], dialect, "upstream-name")
        known = con.execute("SELECT 1 FROM td_dialects WHERE name = ?", (dialect,)).fetchone()
        hint = (
            ""
            if known
            else f" (dialect {dialect!r} has no TableGen in the index, and no C++ creates a "
            f"{dialect}::…Op named like {mnemonic!r})"
        )
        raise QueryError(_not_found(con, "op", op) + hint)
    if con.execute("SELECT 1 FROM op_sites WHERE op_class = ? LIMIT 1", (op,)).fetchone():
        return OpInfo(op, op, "", "class-name")
    raise QueryError(_not_found(con, "op", op))


def backend_of_path(path: str) -> str | None:
    """third_party/amd/lib/… → "amd"; shared code → None."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "third_party" else None


def _upstream_class_keys(mnemonic: str) -> list[str]:
    """Lower-case C++ class names an upstream op's mnemonic may have, most specific first: `inline_asm` →
    inlineasmop; `mlir.constant` → constantop (LLVM's `mlir.`/`intr.` prefixes); `shfl.sync` → shflsyncop, shflop."""
    parts = mnemonic.split(".")
    if parts[0] in ("mlir", "intr") and len(parts) > 1:
        parts = parts[1:]
    return [("".join(parts[:n]).replace("_", "") + "op").lower() for n in range(len(parts), 0, -1)]


def _scope_ok(ctx: _Ctx, info: OpInfo, scope: str) -> tuple[bool, bool]:
    """(does a site's namespace qualifier fit the op, is the match ambiguous)."""
    if info.resolved_by == "upstream-name":
        return scope.rsplit("::", 1)[-1].lower() == info.cpp_namespace.lower(), False
    if not scope:
        return True, len(ctx.op_by_class.get(info.cpp_class, [])) > 1
    want = "::" + info.cpp_namespace.strip(":")
    have = "::" + ctx.expand_scope(scope).strip(":")
    return want.endswith(have) or have.endswith(want), False


def creators(db: str | Path | sqlite3.Connection, op: str, depth: int = CALL_DEPTH) -> OpSites:
    """Where op OP is created: `X::create`, `create<X>`, `replaceOpWithNewOp<X>`, DRR results; each site with the call
    paths that reach it (up to `depth` callers) and the passes that run it."""
    with connection(db) as con:
        return _op_sites(_Ctx(con), op, "create", depth)


def erasers(db: str | Path | sqlite3.Connection, op: str, depth: int = CALL_DEPTH) -> OpSites:
    """Where op OP is removed: eraseOp/replaceOp/replaceOpWithNewOp on it, `x.erase()`, `x.replaceAllUsesWith(…)` (the
    op is left dead for the greedy driver), its `fold`/`canonicalize` methods, DRR patterns rooted at it."""
    with connection(db) as con:
        return _op_sites(_Ctx(con), op, "erase", depth)


def _op_sites(ctx: _Ctx, op: str, action: str, depth: int) -> OpSites:
    con = ctx.con
    info = _resolve_op(con, op)
    sites: list[Site] = []
    paths_cache: dict[int, tuple[list[CallPath], int]] = {}
    rows = con.execute(
        "SELECT * FROM op_sites WHERE op_class = ? AND action = ? ORDER BY file_id, line", (info.cpp_class, action)
    ).fetchall()
    for r in rows:
        ok, ambiguous = _scope_ok(ctx, info, r["op_scope"] or "")
        if not ok:
            continue
        sites.append(
            _site(
                ctx,
                r["function_id"],
                action,
                r["how"],
                ctx.loc(r["file_id"], r["line"], r["snippet"]),
                r["target"] or "",
                ambiguous,
                depth,
                paths_cache,
            )
        )
    if action == "erase" and info.resolved_by != "upstream-name":
        for r in con.execute(
            "SELECT * FROM functions WHERE cls = ? AND name IN ('fold', 'canonicalize') ORDER BY file_id, line",
            (info.cpp_class,),
        ).fetchall():
            sites.append(
                _site(
                    ctx,
                    r["id"],
                    action,
                    r["name"],
                    ctx.loc(r["file_id"], r["line"], r["signature"]),
                    "",
                    False,
                    0,
                    paths_cache,
                )
            )
    column = "root_op" if action == "erase" else "result_ops"
    for d in con.execute(f"SELECT * FROM drr_patterns WHERE {column} LIKE ?", (f"%{info.name}%",)).fetchall():
        made = json.loads(d["result_ops"]) if action == "create" else [d["root_op"]]
        if info.name in made:
            site = Site(action, "drr", ctx.loc(d["file_id"], d["line"], d["snippet"]), None, d["def_name"])
            site.passes = ctx.pass_args(ctx.registered_by(d["def_name"], None))
            sites.append(site)
    return OpSites(info, action, sites)


def _site(
    ctx: _Ctx,
    fn_id: int | None,
    action: str,
    how: str,
    loc: Loc,
    target: str,
    ambiguous: bool,
    depth: int,
    paths_cache: dict[int, tuple[list[CallPath], int]],
) -> Site:
    fn, ref = ctx.fn_ref_by_id(fn_id)
    site = Site(action, how, loc, ref, fn.cls if fn and fn.cls in ctx.patterns else None, target, ambiguous)
    if fn is None:
        return site
    owners = ctx.owners(fn)
    if fn.id not in paths_cache:
        paths_cache[fn.id] = _caller_paths(ctx, fn, depth) if not owners else ([], 0)
    site.paths, site.paths_omitted = paths_cache[fn.id]
    site.direct_passes = ctx.pass_args(owners or ctx.file_owners(fn.file_id))
    site.passes = sorted(set(site.direct_passes).union(*(p.passes for p in site.paths)))
    return site


def _caller_paths(ctx: _Ctx, start: FnRow, depth: int) -> tuple[list[CallPath], int]:
    """Caller chains ending at `start`, outermost first, each with the passes that own a function on it, and how
    many more were found than kept. Breadth first: a chain stops at a pass or pattern method, a function nobody
    calls, or after `depth` calls; chains that reach a pass come first, then shorter ones."""
    done: list[list[tuple[FnRow, Loc | None]]] = []
    frontier: list[list[tuple[FnRow, Loc | None]]] = [[(start, None)]]
    for level in range(depth + 1):
        nxt: list[list[tuple[FnRow, Loc | None]]] = []
        for chain in frontier:
            fn = chain[-1][0]
            if level == depth or (level > 0 and ctx.owners(fn)):
                done.append(chain)
                continue
            backends = {b for f, _ in chain if (b := ctx.backend(f.file_id))}
            # no cycles, and no chain through two backends' code (NVIDIA's and AMD's same-named helpers)
            edges = [
                e
                for e in callgraph.callers(ctx.con, fn, scopes=ctx.scopes)
                if all(e.caller.id != f.id for f, _ in chain)
                and not (backends and ctx.backend(e.caller.file_id) not in (None, *backends))
            ]
            if not edges:
                done.append(chain)
            nxt.extend([*chain, (e.caller, ctx.loc(e.caller.file_id, e.line, e.snippet))] for e in edges)
        frontier = nxt[:PATH_BUDGET]
    unique: dict[tuple[int, ...], tuple[list[tuple[FnRow, Loc | None]], set[str]]] = {}
    for chain in done:
        key = tuple(f.id for f, _ in chain)
        if len(chain) > 1 and key not in unique:  # one path per chain of functions, not per call line
            unique[key] = (chain, ctx.path_owners([f for f, _ in chain]))
    ranked = sorted(unique.values(), key=lambda co: (not co[1], len(co[0])))
    paths = [
        CallPath([Hop(ctx.fn_ref(f), call) for f, call in reversed(chain)], ctx.pass_args(owners))
        for chain, owners in ranked[:MAX_PATHS]
    ]
    return paths, max(0, len(ranked) - MAX_PATHS)


def function_gates(db: str | Path | sqlite3.Connection, function: FunctionRef) -> list[GateInfo]:
    """The gates inside one function, as returned in a result (`Site.function`, `CallEdge.caller`, …)."""
    with connection(db) as con:
        ctx = _Ctx(con)
        row = con.execute(
            "SELECT f.id FROM functions f JOIN files fl ON fl.id = f.file_id WHERE fl.path = ? AND "
            "f.line = ? AND f.qualname = ?",
            (function.loc.file, function.loc.line, function.name),
        ).fetchone()
        return _gates(ctx, callgraph.function(con, row[0]), None) if row else []


# ---- conditions ----------------------------------------------------------------------------------------------------
def conditions(db: str | Path | sqlite3.Connection, symbol: str, callee_depth: int = 0) -> Conditions:
    """Gating conditions of a pattern/class (all its methods), a function (`name` or `Cls::name`) or a pass (its
    class and the patterns it registers): failure() guards, notifyMatchFailure, remarks/warnings/errors, LDBG,
    asserts, early `return false/true` in predicates. `callee_depth=1` adds the gates of the functions they call."""
    with connection(db) as con:
        ctx = _Ctx(con)
        targets, notes = _targets(ctx, symbol)
        gates: list[GateInfo] = []
        seen: set[int] = set()
        frontier: list[tuple[FnRow, str | None]] = [(t, None) for t in targets]
        for level in range(callee_depth + 1):
            nxt: list[tuple[FnRow, str | None]] = []
            for fn, via in frontier:
                if fn.id in seen:
                    continue
                seen.add(fn.id)
                gates.extend(_gates(ctx, fn, via))
                if level < callee_depth:
                    for _call, edges in callgraph.callees(con, fn, scopes=ctx.scopes):
                        nxt.extend((e.callee, via or fn.qualname) for e in edges if not e.by_name)
            frontier = nxt
        return Conditions(symbol, [ctx.fn_ref(f) for f in targets], gates, notes)


def _gates(ctx: _Ctx, fn: FnRow, via: str | None) -> list[GateInfo]:
    ref = ctx.fn_ref(fn)
    return [
        GateInfo(
            g["kind"],
            g["condition"],
            json.loads(g["guards"]),
            g["message"],
            ctx.loc(g["file_id"], g["line"], g["snippet"]),
            ref,
            via,
        )
        for g in ctx.con.execute("SELECT * FROM gates WHERE function_id = ? ORDER BY line", (fn.id,))
    ]


def _targets(ctx: _Ctx, symbol: str) -> tuple[list[FnRow], list[str]]:
    con, notes = ctx.con, []
    ids: list[int] = []
    cls, _, meth = symbol.rpartition("::")
    if cls:
        ids = [
            r[0]
            for r in con.execute(
                "SELECT id FROM functions WHERE qualname = ? OR (cls = ? AND name = ?) ORDER BY file_id, line",
                (symbol, cls.rsplit("::", 1)[-1], meth),
            )
        ]
    if not ids:
        ids = [r[0] for r in con.execute("SELECT id FROM functions WHERE cls = ? ORDER BY file_id, line", (symbol,))]
        for p in _pattern_refs(ctx, symbol):
            passes = ctx.pass_args(ctx.registered_by(symbol, ctx.file_ids.get(p.loc.file)))
            notes.append(
                f"pattern {p.name} : {p.base}<{p.root_op or '?'}> at {p.loc}"
                + (f", registered by {', '.join(passes)}" if passes else "")
            )
    if not ids:
        ids = [r[0] for r in con.execute("SELECT id FROM functions WHERE name = ? ORDER BY file_id, line", (symbol,))]
    if not ids:
        try:
            infos = _pass_info(ctx, symbol)
        except QueryError:
            infos = []
        for info in infos:
            if info.def_name is None:
                continue
            notes.append(f"pass {info.argument} ({info.def_name}): its class and {len(info.patterns)} patterns")
            ids += [
                r[0]
                for r in con.execute(
                    "SELECT f.id FROM functions f "
                    "JOIN pass_classes c ON c.class_name = f.cls AND c.file_id = f.file_id "
                    "WHERE c.def_name = ? ORDER BY f.line",
                    (info.def_name,),
                )
            ]
            for p in info.patterns:
                if p.match_fn is not None:
                    ids += [
                        r[0]
                        for r in con.execute(
                            "SELECT f.id FROM functions f JOIN files fl ON fl.id = f.file_id"
                            " WHERE f.cls = ? AND fl.path = ?",
                            (p.name, p.loc.file),
                        )
                    ]
    if not ids:
        raise QueryError(_not_found(con, "function, class or pass", symbol))
    return [callgraph.function(con, i) for i in dict.fromkeys(ids)], notes


# ---- remarks -------------------------------------------------------------------------------------------------------
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
        ctx = _Ctx(con)
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


# ---- call graph ----------------------------------------------------------------------------------------------------
def callers(db: str | Path | sqlite3.Connection, symbol: str) -> list[CallEdge]:
    """Calls that may reach SYMBOL (a function `name`, `Cls::name`, or all methods of a class)."""
    with connection(db) as con:
        ctx = _Ctx(con)
        targets, _ = _targets(ctx, symbol)
        out = []
        for fn in targets:
            ref = ctx.fn_ref(fn)
            for e in callgraph.callers(con, fn, limit=200, scopes=ctx.scopes):
                out.append(
                    CallEdge(
                        ctx.fn_ref(e.caller), ref, fn.name, ctx.loc(e.caller.file_id, e.line, e.snippet), e.by_name
                    )
                )
        return out


def callees(db: str | Path | sqlite3.Connection, symbol: str, indexed_only: bool = False) -> list[CallEdge]:
    """Calls made by SYMBOL, each resolved to the indexed functions it may reach (none: an MLIR/LLVM API call)."""
    with connection(db) as con:
        ctx = _Ctx(con)
        targets, _ = _targets(ctx, symbol)
        out = []
        for fn in targets:
            ref = ctx.fn_ref(fn)
            for call, edges in callgraph.callees(con, fn, scopes=ctx.scopes):
                loc = ctx.loc(fn.file_id, call["line"], call["snippet"])
                if not edges and not indexed_only:
                    out.append(CallEdge(ref, None, call["callee"], loc, False))
                for e in edges:
                    out.append(CallEdge(ref, ctx.fn_ref(e.callee), call["callee"], loc, e.by_name))
        return out


# ---- full text -----------------------------------------------------------------------------------------------------
def search(db: str | Path | sqlite3.Connection, text: str, limit: int = 20) -> list[SearchHit]:
    """Full-text search over function bodies, messages, TableGen records and pipeline steps (SQLite FTS5)."""
    words = re.findall(r"[\w]+\*?", text)
    if not words:
        raise QueryError(f"nothing to search for in {text!r}")
    with connection(db) as con:
        ctx = _Ctx(con)
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
