"""What gates a pattern, function or pass: failure() guards, notifyMatchFailure, diagnostics, LDBG, asserts, early
returns and returned expressions in predicates; for a target, only those a compile for it can reach."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from compiler_index import callgraph
from compiler_index.callgraph import FnRow
from compiler_index.queries.context import Context, connection
from compiler_index.queries.results import Conditions, FunctionRef, GateInfo
from compiler_index.queries.symbols import resolve_targets
from compiler_index.target import for_target
from irscope.targets import Target


def function_gates(db: str | Path | sqlite3.Connection, function: FunctionRef) -> list[GateInfo]:
    """The gates inside one function, as returned in a result (`Site.function`, `CallEdge.caller`, …)."""
    with connection(db) as con:
        return gates_of(Context(con), function)


def ref_key(function: FunctionRef) -> tuple[str, int, str]:
    """How a Context knows the functions it referenced (`Context.ref_ids`)."""
    return (function.loc.file, function.loc.line, function.name)


def gates_of(ctx: Context, function: FunctionRef) -> list[GateInfo]:
    """`function_gates` on an open Context (a function reference it made is found without a lookup)."""
    key = ref_key(function)
    fn_id = ctx.ref_ids.get(key)  # pragma: no mutate (a cache: without it the query below finds the same id)
    if fn_id is None:
        row = ctx.con.execute(
            "SELECT f.id FROM functions f JOIN files fl ON fl.id = f.file_id "  # pragma: no mutate (SQL's case)
            "WHERE fl.path = ? AND f.line = ? AND f.qualname = ?",  # pragma: no mutate (SQL's case)
            key,
        ).fetchone()
        if row is None:
            return []
        fn_id = row[0]
    memo = ctx.memo.setdefault(("gates",), {})  # pragma: no mutate (a cache's key: any other key caches the same)
    if fn_id not in memo:
        memo[fn_id] = _gates(ctx, ctx.function(fn_id), None)
    return memo[fn_id]


def conditions(
    db: str | Path | sqlite3.Connection, symbol: str, callee_depth: int = 0, target: str | Target | None = None
) -> Conditions:
    """Gating conditions of a pattern/class (all its methods), a function (`name` or `Cls::name`) or a pass (its
    class and the patterns it registers): failure() guards, notifyMatchFailure, remarks/warnings/errors, LDBG,
    asserts, early `return false/true` and returned expressions in predicates. `callee_depth=1` adds the gates of
    the functions they call. With `target` (`cuda:90`, `hip:gfx942`), gates whose guards contradict it are left
    out (compiler_index.target) and a note says how many."""
    if isinstance(target, str):
        target = Target.parse(target)
    with connection(db) as con:
        ctx = Context(con)
        targets, notes = resolve_targets(ctx, symbol)
        gates: list[GateInfo] = []
        seen: set[int] = set()
        frontier: list[tuple[FnRow, str | None]] = [(t, None) for t in targets]
        for level in range(callee_depth + 1):
            if level:  # the functions the level above calls, each reached `via` the target it started from
                frontier = [
                    (e.callee, via or fn.qualname)
                    for fn, via in frontier
                    for _call, edges in _callees(ctx, fn)
                    for e in edges
                    if not e.by_name
                ]
            kept: list[tuple[FnRow, str | None]] = []
            for fn, via in frontier:
                if fn.id in seen:
                    continue
                seen.add(fn.id)
                gates.extend(_gates(ctx, fn, via))
                kept.append((fn, via))
            frontier = kept
        if target is not None:
            gates, dropped = for_target(gates, target)
            if dropped:
                notes.append(f"{dropped} gates left out: their guards contradict {target}")
        return Conditions(symbol, [ctx.fn_ref(f) for f in targets], gates, notes)


def _callees(ctx: Context, fn: FnRow) -> list[tuple[sqlite3.Row, list[callgraph.CallEdge]]]:
    return callgraph.callees(ctx.con, fn, scopes=ctx.scopes)  # pragma: no mutate (scopes: a cache callees rebuilds)


# Equivalent mutants, marked for mutmut: `prefetch_gates` fills a cache that `_gates` does without (it queries
# what the cache lacks), and SQL keywords ignore case.
_ROWS = "gate_rows"  # the cache's key in Context.memo


def prefetch_gates(ctx: Context, fn_ids: list[int]) -> None:
    """The gate rows of these functions in one query, for `gates_of` calls about to come one by one."""
    rows: dict[int, list[sqlite3.Row]] = ctx.memo.setdefault((_ROWS,), {})  # pragma: no mutate (the cache)
    missing = sorted({i for i in fn_ids if i not in rows})  # pragma: no mutate (the cache)
    if not missing:  # pragma: no mutate (the cache)
        return
    for i in missing:
        rows[i] = []  # pragma: no mutate (the cache)
    marks = ",".join("?" * len(missing))
    for g in ctx.con.execute(f"SELECT * FROM gates WHERE function_id IN ({marks}) ORDER BY line", missing):
        rows[g["function_id"]].append(g)  # pragma: no mutate (the cache)


def _gates(ctx: Context, fn: FnRow, via: str | None) -> list[GateInfo]:
    ref = ctx.fn_ref(fn)
    prefetched = ctx.memo.get((_ROWS,), {}).get(fn.id)  # pragma: no mutate (the cache; the query below)
    if prefetched is None:
        query = "SELECT * FROM gates WHERE function_id = ? ORDER BY line"  # pragma: no mutate (SQL's case)
        prefetched = ctx.con.execute(query, (fn.id,)).fetchall()
    # plain dicts: a column named in another case is an error there (a sqlite3.Row ignores the case)
    rows = [dict(g) for g in prefetched]
    return [
        GateInfo(
            g["kind"],
            g["condition"],
            json.loads(g["guards"]),
            g["message"],
            ctx.loc(g["file_id"], g["line"], g["snippet"]),
            ref,
            via,
            g["expr"] or "",
        )
        for g in rows
    ]
