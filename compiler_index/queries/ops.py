"""Where an op is created or erased: each site with the call paths that reach it and the passes that run it."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict
from pathlib import Path

from compiler_index.callgraph import FnRow
from compiler_index.queries.context import Context, connection, not_found
from compiler_index.queries.results import CallPath, FunctionRef, Hop, Loc, OpInfo, OpSites, QueryError, Site

CALL_DEPTH = 4  # callers followed from a creation/erase site
MAX_PATHS = 8  # call paths kept per function
PATH_BUDGET = 256  # partial call chains followed per level


def resolve_op(db: str | Path | sqlite3.Connection, op: str) -> OpInfo:
    with connection(db) as con:
        return _resolve_op(con, op)


def _resolve_op(con: sqlite3.Connection, op: str, ctx: Context | None = None) -> OpInfo:
    if ctx is not None:  # a Context holds the (small) td_ops table: no query per op
        r = ctx.td_op(op)
    else:
        r = con.execute(
            "SELECT * FROM td_ops WHERE name = ? OR def_name = ? ORDER BY name = ? DESC LIMIT 1", (op, op, op)
        ).fetchone()
        if r is None and "." not in op:
            r = con.execute("SELECT * FROM td_ops WHERE cpp_class = ? LIMIT 1", (op,)).fetchone()
    if r is not None:
        if ctx is not None:
            dialect_file = ctx.files[r["file_id"]]
        else:
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
            if (op_class := _upstream_class(con, want, dialect, ctx)) is not None:
                return OpInfo(op, op_class, dialect, "upstream-name")
        known = con.execute("SELECT 1 FROM td_dialects WHERE name = ?", (dialect,)).fetchone()
        hint = (
            ""
            if known
            else f" (dialect {dialect!r} has no TableGen in the index, and no C++ creates a "
            f"{dialect}::…Op named like {mnemonic!r})"
        )
        raise QueryError(not_found(con, "op", op) + hint)
    if con.execute("SELECT 1 FROM op_sites WHERE op_class = ? LIMIT 1", (op,)).fetchone():
        return OpInfo(op, op, "", "class-name")
    raise QueryError(not_found(con, "op", op))


def _upstream_class(con: sqlite3.Connection, want: str, dialect: str, ctx: Context | None) -> str | None:
    """The C++ class of the first op site (by id) whose class is `want` in lower case and whose namespace ends in
    `dialect` (case aside); from the rows `_prefetch_upstream` loaded, when it did."""
    rows = ctx.memo.get(("upstream_classes",), {}).get(want) if ctx is not None else None
    if rows is not None and not {"%", "_"} & set(dialect):  # the LIKE below is then a plain suffix test
        return next((c for c, scope in rows if scope is not None and scope.lower().endswith(dialect.lower())), None)
    row = con.execute(  # op_sites_lower_class indexes lower(op_class)
        "SELECT op_class FROM op_sites WHERE lower(op_class) = ? AND lower(op_scope) LIKE ? LIMIT 1",
        (want, f"%{dialect.lower()}"),
    ).fetchone()
    return row[0] if row else None


def _prefetch_upstream(ctx: Context, ops: list[str]) -> None:
    """The op sites of every C++ class these ops (those TableGen does not define) may name, in one query."""
    rows: dict[str, list[tuple[str, str | None]]] = ctx.memo.setdefault(("upstream_classes",), {})
    wants = {w for op in ops if "." in op and ctx.td_op(op) is None for w in _upstream_class_keys(op.partition(".")[2])}
    missing = sorted(wants - rows.keys())
    if not missing:
        return
    for w in missing:
        rows[w] = []
    for key, op_class, scope in ctx.con.execute(
        f"SELECT lower(op_class), op_class, op_scope FROM op_sites WHERE lower(op_class) IN "
        f"({','.join('?' * len(missing))}) ORDER BY id",
        missing,
    ):
        rows[key].append((op_class, scope))


def _upstream_class_keys(mnemonic: str) -> list[str]:
    """Lower-case C++ class names an upstream op's mnemonic may have, most specific first: `inline_asm` →
    inlineasmop; `mlir.constant` → constantop (LLVM's `mlir.`/`intr.` prefixes); `shfl.sync` → shflsyncop, shflop."""
    parts = mnemonic.split(".")
    if parts[0] in ("mlir", "intr") and len(parts) > 1:
        parts = parts[1:]
    return [("".join(parts[:n]).replace("_", "") + "op").lower() for n in range(len(parts), 0, -1)]


def _scope_ok(ctx: Context, info: OpInfo, scope: str) -> tuple[bool, bool]:
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
        return op_sites(Context(con), op, "create", depth)


def erasers(db: str | Path | sqlite3.Connection, op: str, depth: int = CALL_DEPTH) -> OpSites:
    """Where op OP is removed: eraseOp/replaceOp/replaceOpWithNewOp on it, `x.erase()`, `x.replaceAllUsesWith(…)` (the
    op is left dead for the greedy driver), its `fold`/`canonicalize` methods, DRR patterns rooted at it."""
    with connection(db) as con:
        return op_sites(Context(con), op, "erase", depth)


def op_sites(ctx: Context, op: str, action: str, depth: int) -> OpSites:
    """Sites that create (`action` "create") or erase op OP; call paths of each function are walked once per
    Context, so queries sharing one share that work."""
    info = _resolved(ctx, op)
    if (info.cpp_class, action) not in ctx.memo.get(("op_site_rows",), {}):
        prefetch_op_sites(ctx, [(op, action)], depth)
    rows, folds = ctx.memo[("op_site_rows",)][(info.cpp_class, action)]
    sites: list[Site] = []
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
            )
        )
    if action == "erase" and info.resolved_by != "upstream-name":
        for r in folds:
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
                )
            )
    column = "root_op" if action == "erase" else "result_ops"
    for d in ctx.drr_patterns:
        if not d[column] or info.name not in d[column]:
            continue
        made = json.loads(d["result_ops"]) if action == "create" else [d["root_op"]]
        if info.name in made:
            site = Site(action, "drr", ctx.loc(d["file_id"], d["line"], d["snippet"]), None, d["def_name"])
            site.passes = ctx.pass_args(ctx.registered_by(d["def_name"], None))
            sites.append(site)
    return OpSites(info, action, sites)


def _resolved(ctx: Context, op: str) -> OpInfo:
    """`_resolve_op` once per op and Context (its QueryError too)."""
    memo: dict[str, OpInfo | str] = ctx.memo.setdefault(("resolve_op",), {})
    if op not in memo:
        try:
            memo[op] = _resolve_op(ctx.con, op, ctx)
        except QueryError as e:
            memo[op] = str(e)
    hit = memo[op]
    if isinstance(hit, str):
        raise QueryError(hit)
    return hit


def prefetch_op_sites(ctx: Context, wanted: list[tuple[str, str]], depth: int) -> None:
    """The site rows of these (op, action) pairs (ops that do not resolve are skipped), their fold/canonicalize
    methods, the functions holding them and their stored caller paths, in a few queries: for `op_sites` calls
    about to come one by one (`explain` asks about every op whose count changed)."""
    cache: dict[tuple[str, str], tuple[list[sqlite3.Row], list[sqlite3.Row]]] = ctx.memo.setdefault(
        ("op_site_rows",), {}
    )
    keys: set[tuple[str, str]] = set()
    _prefetch_upstream(ctx, [op for op, _ in wanted])
    for op, action in wanted:
        try:
            key = (_resolved(ctx, op).cpp_class, action)
        except QueryError:
            continue
        if key not in cache:
            keys.add(key)
    if not keys:
        return
    for key in keys:
        cache[key] = ([], [])
    for action in sorted({a for _, a in keys}):
        classes = sorted(c for c, a in keys if a == action)
        # id last: the order a query for one class and action gives (index order, then sorted stably)
        for r in ctx.con.execute(
            f"SELECT * FROM op_sites WHERE action = ? AND op_class IN ({','.join('?' * len(classes))}) "
            "ORDER BY file_id, line, id",
            [action, *classes],
        ):
            cache[(r["op_class"], action)][0].append(r)
    erased = sorted({c for c, a in keys if a == "erase"})  # op_sites reads these for ops TableGen defines
    if erased:
        for r in ctx.con.execute(
            f"SELECT * FROM functions WHERE cls IN ({','.join('?' * len(erased))}) AND name IN ('fold', "
            "'canonicalize') ORDER BY file_id, line, id",
            erased,
        ):
            cache[(r["cls"], "erase")][1].append(r)
    ids = [r["function_id"] for k in keys for r in cache[k][0] if r["function_id"] is not None]
    ctx.prefetch([*ids, *(r["id"] for k in keys for r in cache[k][1])])
    _prefetch_caller_paths(ctx, ids, depth)


def _site(
    ctx: Context,
    fn_id: int | None,
    action: str,
    how: str,
    loc: Loc,
    target: str,
    ambiguous: bool,
    depth: int,
) -> Site:
    fn, ref = ctx.fn_ref_by_id(fn_id)
    site = Site(action, how, loc, ref, fn.cls if fn and fn.cls in ctx.patterns else None, target, ambiguous)
    if fn is None:
        return site
    owners = ctx.owners(fn)
    if owners:
        site.paths, site.paths_omitted = [], 0
    else:
        site.paths, site.paths_omitted = caller_paths(ctx, fn, depth)
    site.direct_passes = ctx.pass_args(owners or ctx.file_owners(fn.file_id))
    site.passes = sorted(set(site.direct_passes).union(*(p.passes for p in site.paths)))
    return site


def _caller_paths(ctx: Context, start: FnRow, depth: int) -> tuple[list[CallPath], int]:
    """Caller chains ending at `start`, outermost first, each with the passes that own a function on it, and how
    many more were found than kept. Breadth first: a chain stops at a pass or pattern method, a function nobody
    calls, or after `depth` calls; chains that reach a pass come first, then shorter ones. A function a pass owns
    has none (its sites are the pass's own: `_site` and `precompute_caller_paths` never walk from one)."""
    done: list[list[tuple[FnRow, Loc | None]]] = []
    frontier: list[list[tuple[FnRow, Loc | None]]] = [[(start, None)]]
    for _ in range(depth):
        nxt: list[list[tuple[FnRow, Loc | None]]] = []
        for chain in frontier:
            fn = chain[-1][0]
            if ctx.owners(fn):  # a pass or pattern method: the chain ends there
                done.append(chain)
                continue
            backends = {b for f, _ in chain if (b := ctx.backend(f.file_id))}
            # no cycles, and no chain through two backends' code (NVIDIA's and AMD's same-named helpers)
            edges = [
                e
                for e in ctx.callers(fn)
                if all(e.caller.id != f.id for f, _ in chain)
                and not (backends and ctx.backend(e.caller.file_id) not in (None, *backends))
            ]
            if not edges:
                done.append(chain)
            nxt.extend([*chain, (e.caller, ctx.loc(e.caller.file_id, e.line, e.snippet))] for e in edges)
        frontier = nxt[:PATH_BUDGET]
    done.extend(frontier)  # `depth` calls up: the chains still open end here
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


def caller_paths(ctx: Context, fn: FnRow, depth: int) -> tuple[list[CallPath], int]:
    """`_caller_paths`, read from the index's precomputed table when it holds them, else walked (once per Context)."""
    memo: dict[int, tuple[list[CallPath], int]] = ctx.memo.setdefault(("caller_paths", depth), {})
    if fn.id not in memo:
        raw: dict[int, tuple[str, int] | None] = ctx.memo.get(("caller_paths_raw", depth), {})
        if fn.id in raw:
            row = raw[fn.id]
        else:
            row = ctx.con.execute(
                "SELECT paths, omitted FROM caller_paths WHERE function_id = ? AND depth = ?", (fn.id, depth)
            ).fetchone()
        refs, calls = ctx.memo.setdefault(("path_parts",), ({}, {}))
        memo[fn.id] = (_paths_from_json(row[0], refs, calls), row[1]) if row else _caller_paths(ctx, fn, depth)
    return memo[fn.id]


def _prefetch_caller_paths(ctx: Context, fn_ids: list[int], depth: int) -> None:
    """The stored paths of these functions in one query, kept as text: decoded only for the sites used."""
    raw: dict[int, tuple[str, int] | None] = ctx.memo.setdefault(("caller_paths_raw", depth), {})
    missing = sorted({i for i in fn_ids if i not in raw})
    if not missing:
        return
    raw.update(dict.fromkeys(missing))
    marks = ",".join("?" * len(missing))
    for fn_id, paths, omitted in ctx.con.execute(
        f"SELECT function_id, paths, omitted FROM caller_paths WHERE depth = ? AND function_id IN ({marks})",
        [depth, *missing],
    ):
        raw[fn_id] = (paths, omitted)


def precompute_caller_paths(con: sqlite3.Connection, depth: int = CALL_DEPTH) -> int:
    """Fill `caller_paths` for every function holding an op site and owned by no pass (the ones whose sites
    report call paths). Returns how many functions it walked."""
    ctx = Context(con)
    rows = []
    for (fn_id,) in con.execute("SELECT DISTINCT function_id FROM op_sites WHERE function_id IS NOT NULL"):
        fn = ctx.function(fn_id)
        if ctx.owners(fn):
            continue
        paths, omitted = _caller_paths(ctx, fn, depth)
        rows.append((fn_id, depth, json.dumps([asdict(p) for p in paths]), omitted))
    con.executemany("INSERT INTO caller_paths VALUES (?, ?, ?, ?)", rows)
    return len(rows)


def _paths_from_json(
    text: str, refs: dict[tuple, FunctionRef] | None = None, calls: dict[tuple, Loc] | None = None
) -> list[CallPath]:
    """Stored call paths as results. `refs`, `calls`: the functions and call sites decoded before (a Context's),
    shared rather than built again: the same helpers and calls recur across paths and sites."""
    refs = {} if refs is None else refs
    calls = {} if calls is None else calls

    def ref(f: dict) -> FunctionRef:
        loc = f["loc"]
        key = (f["name"], loc["file"], loc["line"], loc["snippet"], f["end_line"])
        hit = refs.get(key)
        if hit is None:
            hit = refs[key] = FunctionRef(f["name"], Loc(loc["file"], loc["line"], loc["snippet"]), f["end_line"])
        return hit

    def call(c: dict | None) -> Loc | None:
        if c is None:
            return None
        key = (c["file"], c["line"], c["snippet"])
        hit = calls.get(key)
        if hit is None:
            hit = calls[key] = Loc(c["file"], c["line"], c["snippet"])
        return hit

    return [
        CallPath([Hop(ref(h["function"]), call(h["call"])) for h in p["hops"]], p["passes"]) for p in json.loads(text)
    ]
