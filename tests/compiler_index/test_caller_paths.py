"""How `explain` walks callers up to the pass that runs a site (compiler_index/queries/ops.py, `_caller_paths`), on
call graphs built by hand: the walk's depth bound, its stop at a pass, no cycles, no chain through two backends'
same-named helpers, and its order (chains that reach a pass first, then shorter ones). The corpus and Triton's
source exercise these only where they happen to; here each rule decides the answer."""

from __future__ import annotations

from compiler_index.callgraph import CallEdge, FnRow
from compiler_index.queries.context import Context, backend_of_path
from compiler_index.queries.ops import MAX_PATHS, _caller_paths
from compiler_index.queries.results import FunctionRef, Loc

SHARED, NVIDIA, AMD, PASS = 1, 2, 3, 4
FILES = {
    SHARED: "lib/Analysis/Utility.cpp",
    NVIDIA: "third_party/nvidia/lib/TargetInfo.cpp",
    AMD: "third_party/amd/lib/TargetInfo.cpp",
    PASS: "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp",
}


class CallGraph:
    """What `_caller_paths` asks of an index Context, answered from a hand-written graph; which passes a chain
    belongs to is the index's own rule (`Context.path_owners`)."""

    def __init__(self, edges: dict[str, list[str]], files: dict[str, int], owners: dict[str, str]):
        self.fns = {
            name: FnRow(i, name, None, name, files.get(name, SHARED), 10 * i, 10 * i + 5)
            for i, name in enumerate(sorted({*edges, *(c for cs in edges.values() for c in cs), *files}), start=1)
        }
        self.edges, self._owners = edges, owners
        self.pass_backends = {d: None for d in owners.values()}

    def fn(self, name: str) -> FnRow:
        return self.fns[name]

    def callers(self, fn: FnRow) -> list[CallEdge]:
        return [
            CallEdge(self.fns[c], fn, self.fns[c].line + 1, f"{fn.name}()", False) for c in self.edges.get(fn.name, [])
        ]

    def owners(self, fn: FnRow) -> set[str]:
        return {self._owners[fn.name]} if fn.name in self._owners else set()

    def backend(self, file_id: int) -> str | None:
        return backend_of_path(FILES[file_id])

    def path_owners(self, chain: list[FnRow]) -> set[str]:
        return Context.path_owners(self, chain)  # type: ignore[arg-type]

    def loc(self, file_id: int, line: int, snippet: str = "") -> Loc:
        return Loc(FILES[file_id], line, snippet)

    def fn_ref(self, fn: FnRow) -> FunctionRef:
        return FunctionRef(fn.qualname, self.loc(fn.file_id, fn.line), fn.end_line)

    def pass_args(self, def_names: set[str]) -> list[str]:
        return sorted(f"arg-{d}" for d in def_names)


def names(graph: CallGraph, start: str, depth: int = 5) -> tuple[list[tuple[list[str], list[str]]], int]:
    paths, omitted = _caller_paths(graph, graph.fn(start), depth)  # type: ignore[arg-type]
    return [([h.function.name for h in p.hops], p.passes) for p in paths], omitted


def test_the_walk_stops_after_depth_calls_and_at_a_pass():
    chain = CallGraph({"site": ["c1"], "c1": ["c2"], "c2": ["c3"]}, {}, {})
    assert names(chain, "site", depth=2) == ([(["c2", "c1", "site"], [])], 0)
    assert names(chain, "site", depth=5) == ([(["c3", "c2", "c1", "site"], [])], 0)
    assert names(CallGraph({}, {"site": SHARED}, {}), "site") == ([], 0), "a function nobody calls has no path"
    owned = CallGraph(
        {"site": ["helper"], "helper": ["pass_fn"], "pass_fn": ["outer"]}, {"pass_fn": PASS}, {"pass_fn": "P"}
    )
    assert names(owned, "site") == ([(["pass_fn", "helper", "site"], ["arg-P"])], 0)


def test_no_cycle_and_no_chain_through_two_backends():
    cycle = CallGraph({"site": ["a"], "a": ["b"], "b": ["a"]}, {}, {})
    assert names(cycle, "site") == ([(["b", "a", "site"], [])], 0)
    crossing = CallGraph({"site": ["nv"], "nv": ["amd", "shared"]}, {"nv": NVIDIA, "amd": AMD, "shared": SHARED}, {})
    assert names(crossing, "site") == ([(["shared", "nv", "site"], [])], 0), "NVIDIA's helper is never AMD's callee"


def test_chains_that_reach_a_pass_come_first_then_shorter_ones_and_the_rest_are_counted():
    graph = CallGraph(
        {"site": ["short", "long1"], "long1": ["long2"], "long2": ["pass_fn"]}, {"pass_fn": PASS}, {"pass_fn": "P"}
    )
    assert names(graph, "site") == (
        [(["pass_fn", "long2", "long1", "site"], ["arg-P"]), (["short", "site"], [])],
        0,
    )
    unowned = CallGraph({"site": ["b", "a"], "b": ["c"]}, {}, {})
    assert names(unowned, "site") == ([(["a", "site"], []), (["c", "b", "site"], [])], 0)
    many = CallGraph({"site": [f"c{i}" for i in range(MAX_PATHS + 3)]}, {}, {})
    paths, omitted = names(many, "site")
    assert len(paths) == MAX_PATHS and omitted == 3


def test_a_pass_among_the_direct_callers_ends_its_chain_and_the_others_go_on():
    graph = CallGraph(
        {"site": ["pass_fn", "helper"], "pass_fn": ["outer"], "helper": ["pattern_fn"]},
        {"pass_fn": PASS},
        {"pass_fn": "P", "pattern_fn": "Q"},
    )
    assert names(graph, "site") == (
        [(["pass_fn", "site"], ["arg-P"]), (["pattern_fn", "helper", "site"], ["arg-Q"])],
        0,
    )


def test_each_hop_carries_the_call_it_makes_to_the_next():
    graph = CallGraph({"site": ["c1"], "c1": ["c2"]}, {}, {})
    (path,), _ = _caller_paths(graph, graph.fn("site"), 5)  # type: ignore[arg-type]
    assert [(h.function.name, h.call and (h.call.line, h.call.snippet)) for h in path.hops] == [
        ("c2", (graph.fn("c2").line + 1, "c1()")),
        ("c1", (graph.fn("c1").line + 1, "site()")),
        ("site", None),
    ]
