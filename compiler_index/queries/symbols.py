"""What a symbol names: a function (`name`, `Cls::name`), every method of a class or pattern, or a pass (its class
and the patterns it registers)."""

from __future__ import annotations

from compiler_index import callgraph
from compiler_index.callgraph import FnRow
from compiler_index.queries.context import Context, not_found
from compiler_index.queries.passes import find_passes, pattern_refs
from compiler_index.queries.results import QueryError


def resolve_targets(ctx: Context, symbol: str) -> tuple[list[FnRow], list[str]]:
    """The functions `symbol` names, tried in order: `Cls::name`, the methods of class `symbol`, functions called
    `symbol`, a pass; and notes on what it resolved to (pattern root op, registering passes)."""
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
        for p in pattern_refs(ctx, symbol):
            passes = ctx.pass_args(ctx.registered_by(symbol, ctx.file_ids.get(p.loc.file)))
            notes.append(
                f"pattern {p.name} : {p.base}<{p.root_op or '?'}> at {p.loc}"
                + (f", registered by {', '.join(passes)}" if passes else "")
            )
    if not ids:
        ids = [r[0] for r in con.execute("SELECT id FROM functions WHERE name = ? ORDER BY file_id, line", (symbol,))]
    if not ids:
        try:
            infos = find_passes(ctx, symbol)
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
        raise QueryError(not_found(con, "function, class or pass", symbol))
    return [callgraph.function(con, i) for i in dict.fromkeys(ids)], notes
