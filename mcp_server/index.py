"""Tools over the compiler index (`compiler-index` queries): a pass, the code creating or erasing an op, the
conditions gating a pattern or function, the code emitting a remark, callers and callees, full-text search and
the join with a trajectory (explain). Each answer is the query's main list, paged, with nested lists cut."""

from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server import MCPServer
from pydantic import Field

from compiler_index import queries
from compiler_index.explain import explain
from mcp_server.app import App
from mcp_server.bounds import Offset, PageInfo, page, per_page, trim
from mcp_server.errors import guarded
from mcp_server.trajectories import READ, TrajectoryArg

Symbol = Annotated[str, Field(description="a pattern, class, function (Cls::name) or pass")]
Op = Annotated[str, Field(description="an op name (ttg.convert_layout), TableGen def or C++ class")]
RANKED = 200  # ranked queries (remarks, search) are asked for this many, so `total` is exact up to it
Depth = Annotated[int, Field(ge=0, le=6, description="callers to follow")]


class IndexAnswer(PageInfo):
    query: str
    db: str
    header: dict[str, Any] = Field(description="what the query resolved to (op, symbol, pass, notes)")
    items: list[dict[str, Any]] = Field(description="a page of the answer's main list, best first")


@dataclass(frozen=True)
class Shaped:
    """A query result split into its header (everything but the main list) and the main list."""

    header: dict[str, Any]
    items: list[Any]


def shape(result: Any, key: str | None) -> Shaped:
    doc = queries.to_json(result)
    if key is None:
        return Shaped({}, doc)
    items = doc.pop(key)
    return Shaped(doc, items)


def answer(app: App, query: str, shaped: Shaped, offset: int, limit: int) -> IndexAnswer:
    chunk, info = page(shaped.items, offset, limit)
    return IndexAnswer(
        query=query,
        db=str(app.db),
        header=trim(shaped.header, items=8, text=400),
        items=[trim(item, items=4, text=400) for item in chunk],
        **info.model_dump(),
    )


def register(mcp: MCPServer, app: App) -> None:
    db = app.db

    @mcp.tool(annotations=READ)
    @guarded
    def index_pass(
        name: Annotated[str, Field(description="pass argument, TableGen def, C++ class or adder (add_x)")],
        offset: Offset = 0,
        limit: int = per_page(3, 20),
    ) -> IndexAnswer:
        """A compiler pass: its .td definition, C++ class and methods, Python adder, pipeline positions and the
        rewrite patterns it registers, each with file:line."""
        return answer(app, f"pass {name}", shape(queries.pass_info(db, name), None), offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def index_creators(
        op: Op, depth: Depth = queries.CALL_DEPTH, offset: Offset = 0, limit: int = per_page(8, 50)
    ) -> IndexAnswer:
        """The code that creates an op (directly, and the call paths reaching it), with the passes that run it."""
        return answer(app, f"creators {op}", shape(queries.creators(db, op, depth=depth), "sites"), offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def index_erasers(
        op: Op, depth: Depth = queries.CALL_DEPTH, offset: Offset = 0, limit: int = per_page(8, 50)
    ) -> IndexAnswer:
        """The code that erases or replaces an op, with the passes that run it."""
        return answer(app, f"erasers {op}", shape(queries.erasers(db, op, depth=depth), "sites"), offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def index_conditions(
        symbol: Symbol,
        callees: Annotated[bool, Field(description="also the gates of the functions it calls")] = False,
        target: Annotated[str | None, Field(description="cuda:90, hip:gfx942, …: drop gates contradicting it")] = None,
        offset: Offset = 0,
        limit: int = per_page(10, 50),
    ) -> IndexAnswer:
        """The conditions that decide whether a pattern, function or pass acts: failure() guards,
        notifyMatchFailure, remarks, asserts, early returns, each with its guards and file:line."""
        result = queries.conditions(db, symbol, callee_depth=1 if callees else 0, target=target)
        return answer(app, f"conditions {symbol}", shape(result, "gates"), offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def index_remarks(
        text: Annotated[str, Field(description="the message as the compiler printed it, or part of it")],
        offset: Offset = 0,
        limit: int = per_page(5, 50),
    ) -> IndexAnswer:
        """Which code emits a remark, warning, error or debug message, best match first."""
        result = queries.remarks(db, text, limit=max(RANKED, offset + limit))
        return answer(app, f"remarks {text}", shape(result, None), offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def index_callers(symbol: Symbol, offset: Offset = 0, limit: int = per_page(15, 100)) -> IndexAnswer:
        """The call sites of a function (or of every method of a class)."""
        return answer(app, f"callers {symbol}", shape(queries.callers(db, symbol), None), offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def index_callees(symbol: Symbol, offset: Offset = 0, limit: int = per_page(15, 100)) -> IndexAnswer:
        """What a function (or every method of a class) calls."""
        return answer(app, f"callees {symbol}", shape(queries.callees(db, symbol), None), offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def index_search(
        text: Annotated[str, Field(description="words to find in code, messages, TableGen and pipelines")],
        offset: Offset = 0,
        limit: int = per_page(10, 100),
    ) -> IndexAnswer:
        """Full-text search over the indexed compiler source."""
        result = queries.search(db, text, limit=max(RANKED, offset + limit))
        return answer(app, f"search {text}", shape(result, None), offset, limit)

    @mcp.tool(annotations=READ)
    @guarded
    def index_explain(
        trajectory: TrajectoryArg,
        pass_ref: Annotated[str, Field(description="snapshot index, stage[i] or pass argument of the pass")],
        depth: Depth = queries.CALL_DEPTH,
        offset: Offset = 0,
        limit: int = per_page(5, 30),
    ) -> IndexAnswer:
        """Why a pass changed the IR: for each op whose count it changed, the code of that pass that creates or
        erases it and the conditions gating that code, ranked; the remarks it printed, traced to their code."""
        loaded = app.store.get(trajectory)
        with loaded.lock:
            result = explain(db, loaded.traj, pass_ref, depth=depth)
        return answer(app, f"explain {trajectory} {pass_ref}", shape(result, "ops"), offset, limit)
