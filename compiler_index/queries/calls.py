"""Call edges into and out of a symbol, each resolved to the indexed functions it may reach."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from compiler_index import callgraph
from compiler_index.queries.context import Context, connection
from compiler_index.queries.results import CallEdge
from compiler_index.queries.symbols import resolve_targets


def callers(db: str | Path | sqlite3.Connection, symbol: str) -> list[CallEdge]:
    """Calls that may reach SYMBOL (a function `name`, `Cls::name`, or all methods of a class)."""
    with connection(db) as con:
        ctx = Context(con)
        targets, _ = resolve_targets(ctx, symbol)
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
        ctx = Context(con)
        targets, _ = resolve_targets(ctx, symbol)
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
