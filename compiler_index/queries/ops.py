"""Where an op is created or erased: each site with the call paths that reach it and the passes that run it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from compiler_index import callgraph
from compiler_index.callgraph import FnRow
from compiler_index.queries.context import Context, connection, not_found
from compiler_index.queries.results import CallPath, Hop, Loc, OpInfo, OpSites, QueryError, Site

CALL_DEPTH = 4  # callers followed from a creation/erase site
MAX_PATHS = 8  # call paths kept per function
PATH_BUDGET = 256  # partial call chains followed per level


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
        raise QueryError(not_found(con, "op", op) + hint)
    if con.execute("SELECT 1 FROM op_sites WHERE op_class = ? LIMIT 1", (op,)).fetchone():
        return OpInfo(op, op, "", "class-name")
    raise QueryError(not_found(con, "op", op))


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
        return _op_sites(Context(con), op, "create", depth)


def erasers(db: str | Path | sqlite3.Connection, op: str, depth: int = CALL_DEPTH) -> OpSites:
    """Where op OP is removed: eraseOp/replaceOp/replaceOpWithNewOp on it, `x.erase()`, `x.replaceAllUsesWith(…)` (the
    op is left dead for the greedy driver), its `fold`/`canonicalize` methods, DRR patterns rooted at it."""
    with connection(db) as con:
        return _op_sites(Context(con), op, "erase", depth)


def _op_sites(ctx: Context, op: str, action: str, depth: int) -> OpSites:
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
    ctx: Context,
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


def _caller_paths(ctx: Context, start: FnRow, depth: int) -> tuple[list[CallPath], int]:
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
