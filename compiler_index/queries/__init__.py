"""Constraint queries over a compiler index. Pure: a database path or connection in, dataclasses out.

Every answer carries file:line and the source line (`Loc`). Paths are relative to the indexed root (for a Triton
checkout: `lib/Dialect/TritonGPU/Transforms/Coalesce.cpp`; for the installed package: `triton/backends/…`).

    from compiler_index import queries as q
    q.pass_info("index.db", "tritongpu-remove-layout-conversions")
    q.creators("index.db", "ttg.convert_layout")       # direct sites and call paths, with owning passes
    q.conditions("index.db", "BlockedToMMA")            # its failure() guards, remarks, asserts, …
    q.remarks("index.db", "Warning: vectorization fails vec = 1 origin vec = 4 numElems = 4")

One module per kind of query: passes, ops (creators, erasers), gates (conditions), diagnostics (remarks), calls
(callers, callees), fulltext (search); symbols resolves what a name means for gates and calls; results holds the
answers and QueryError, context the connection and the lookups a query shares.
"""

from compiler_index.queries.calls import callees, callers
from compiler_index.queries.context import backend_of_path, connection
from compiler_index.queries.diagnostics import REMARK_KINDS, remarks
from compiler_index.queries.fulltext import search
from compiler_index.queries.gates import conditions, function_gates
from compiler_index.queries.ops import CALL_DEPTH, MAX_PATHS, PATH_BUDGET, creators, erasers, resolve_op
from compiler_index.queries.passes import pass_info
from compiler_index.queries.results import (
    Adder,
    CallEdge,
    CallPath,
    Conditions,
    FunctionRef,
    GateInfo,
    Hop,
    Loc,
    OpInfo,
    OpSites,
    PassInfo,
    PatternRef,
    PipelineUse,
    QueryError,
    RemarkMatch,
    SearchHit,
    Site,
    to_json,
)

__all__ = [
    "CALL_DEPTH",
    "MAX_PATHS",
    "PATH_BUDGET",
    "REMARK_KINDS",
    "Adder",
    "CallEdge",
    "CallPath",
    "Conditions",
    "FunctionRef",
    "GateInfo",
    "Hop",
    "Loc",
    "OpInfo",
    "OpSites",
    "PassInfo",
    "PatternRef",
    "PipelineUse",
    "QueryError",
    "RemarkMatch",
    "SearchHit",
    "Site",
    "backend_of_path",
    "callees",
    "callers",
    "conditions",
    "connection",
    "creators",
    "erasers",
    "function_gates",
    "pass_info",
    "remarks",
    "resolve_op",
    "search",
    "to_json",
]
