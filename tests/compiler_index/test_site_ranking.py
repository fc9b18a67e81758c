"""The order `explain` gives the sites that create or erase an op for one pass (compiler_index/explain.py): a site in
the pass's own code comes before one the pass reaches through callers, however short that call path, and a site
is kept for a pass only when it or one of its call paths belongs to that pass. On the corpus no direct site ever has
a longer path than an indirect one, so these rules are pinned here on sites built by hand; so is the gates' order
for a gate evaluated for no target, which `explain` never ranks beside one that was."""

from __future__ import annotations

from compiler_index.explain import _gate_rank, _restrict, _site_rank
from compiler_index.queries.results import CallPath, FunctionRef, GateInfo, Hop, Loc, Site
from compiler_index.target import UNKNOWN, YES

PASS_FILE = "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp"
HELPER_FILE = "lib/Analysis/Utility.cpp"
OTHER_FILE = "lib/Dialect/TritonGPU/Transforms/Prefetch.cpp"


def _fn(name: str, file: str, line: int = 10) -> FunctionRef:
    return FunctionRef(name, Loc(file, line), line + 20)


def _path(*hops: FunctionRef, passes: tuple[str, ...] = ()) -> CallPath:
    return CallPath([Hop(f, Loc(f.loc.file, f.loc.line + 1)) for f in hops], list(passes))


def _site(function: FunctionRef, line: int, paths: list[CallPath], passes=(), direct_passes=()) -> Site:
    return Site(
        "create",
        "create<ConvertLayoutOp>",
        Loc(function.loc.file, line),
        function,
        None,
        passes=list(passes),
        direct_passes=list(direct_passes),
        paths=paths,
    )


def test_a_site_in_the_pass_comes_before_a_reached_one_however_long_its_path():
    helper = _fn("getOrder", HELPER_FILE)
    in_pass = _site(
        _fn("CoalescePass::runOnOperation", PASS_FILE),
        40,
        [_path(_fn("a", OTHER_FILE), _fn("b", OTHER_FILE), _fn("c", PASS_FILE))],
    )
    reached = _site(helper, 12, [_path(_fn("CoalescePass::coalesceOp", PASS_FILE), helper)])
    args, files = {"tritongpu-coalesce"}, {PASS_FILE}
    ranked = sorted([reached, in_pass], key=lambda s: _site_rank(s, args, files))
    assert ranked == [in_pass, reached]
    # a pattern registered by the pass is its own code wherever its file is
    by_pattern = _site(helper, 30, [_path(_fn("x", OTHER_FILE), _fn("y", OTHER_FILE), helper)], direct_passes=args)
    assert sorted([reached, by_pattern], key=lambda s: _site_rank(s, args, files)) == [by_pattern, reached]


def test_among_sites_alike_the_shortest_call_path_comes_first():
    helper = _fn("getOrder", HELPER_FILE)
    near = _site(helper, 50, [_path(_fn("p", PASS_FILE), helper)])
    far = _site(helper, 20, [_path(_fn("p", PASS_FILE), _fn("q", OTHER_FILE), helper)])
    assert sorted([far, near], key=lambda s: _site_rank(s, {"tritongpu-coalesce"}, {PASS_FILE})) == [near, far]


def test_a_site_is_restricted_to_the_paths_of_the_pass_and_kept_when_it_is_the_pass_own():
    args, files = {"tritongpu-coalesce"}, {PASS_FILE}
    helper = _fn("getOrder", HELPER_FILE)
    mine = _path(_fn("CoalescePass::coalesceOp", PASS_FILE), helper)
    named = _path(_fn("x", OTHER_FILE), helper, passes=("tritongpu-coalesce",))
    theirs = _path(_fn("Prefetch::run", OTHER_FILE), helper, passes=("tritongpu-prefetch",))
    site = _site(helper, 12, [mine, theirs, named], passes=("tritongpu-coalesce", "tritongpu-prefetch"))
    kept = _restrict(site, args, files)
    assert kept is not None and kept.paths == [mine, named] and kept.passes == ["tritongpu-coalesce"]
    assert _restrict(_site(helper, 12, [theirs], passes=("tritongpu-prefetch",)), args, files) is None
    own = _site(_fn("CoalescePass::runOnOperation", PASS_FILE), 40, [theirs], passes=("tritongpu-prefetch",))
    kept = _restrict(own, args, files)
    assert kept is not None and kept.paths == [] and kept.passes == ["tritongpu-prefetch"], "its own passes stay"
    registered = _site(helper, 30, [], direct_passes=("tritongpu-coalesce",))
    assert _restrict(registered, args, files) is not None


def test_a_gate_evaluated_for_no_target_ranks_as_one_that_surely_applies():
    """`applies` is "" where no target was given (`conditions` without one; `explain` of a backend the index holds
    no code for): such a gate is not one that "may not apply" (render.py says so only of UNKNOWN), so it ranks with
    the sure ones, by kind first and then by place."""
    fn = _fn("CoalescePass::runOnOperation", PASS_FILE)

    def gate(kind: str, line: int, applies: str) -> GateInfo:
        return GateInfo(kind, "x", [], "", Loc(PASS_FILE, line), fn, applies=applies)

    gates = [gate("debug", 5, YES), gate("failure", 30, UNKNOWN), gate("failure", 40, ""), gate("failure", 20, YES)]
    ranked = sorted(gates, key=_gate_rank)
    assert [(g.loc.line, g.applies) for g in ranked] == [(20, YES), (40, ""), (30, UNKNOWN), (5, YES)]
