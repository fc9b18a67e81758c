"""index_free_topk: argmax-and-mask top-2 → value-only, tie-correct top-2. Detection on suite kernels and kernels
written for this test, refusals with their reasons, the exact edit, and candidates that agree with the original
under the interpreter (ties, ±inf, NaN, odd sizes) and compile for cuda:90 without an index reduction."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from irscope.capture import TensorSpec, build_request
from irscope.capture.loader import load_module
from patterns.appliers import APPLIERS, SourceModule, applicable, generate
from patterns.appliers.check import check_many
from patterns.card import load_cards
from patterns.features import extract
from tests.patterns.test_appliers import touched

REPO = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"
SUITE = REPO / "suite" / "kernels"
APPLIER = APPLIERS["index_free_topk"]
# a two-operand tt.reduce (value and index) in TTIR: what tl.argmax lowers to
INDEX_REDUCE = re.compile(r':2 = "tt\.reduce"')


def candidate(path: Path) -> str:
    (cand,) = generate(path.read_text(), str(path), ["index_free_topk"])
    return cand.source


def test_the_suite_top2_kernel_loses_its_argmax_and_reuses_its_max():
    src = (SUITE / "moe_group_top2.py").read_text()
    assert APPLIER in applicable(src)
    (cand,) = generate(src, "moe_group_top2.py", ["index_free_topk"])
    assert cand.card == "index-free-top2" and cand.params == {"sites": 1}
    assert (
        cand.description.startswith("argmax-and-mask → max, count of maxima, masked max")
        and "line 17" in cand.description
    )
    removed, added = touched(src, cand.source)
    assert removed == [
        "    i1 = tl.argmax(x, axis=0)",
        '    x2 = tl.where(offs == i1, float("-inf"), x)',
        "    v2 = tl.max(x2, axis=0)",
    ]
    assert added[1:] == [
        "    x_top = (x == v1) | (x != x)",
        "    x_ntop = tl.sum(x_top.to(tl.int32), axis=0)",
        '    v2 = tl.where((x_ntop > 1) & (v1 == v1), v1, tl.max(tl.where(x_top, float("-inf"), x), axis=0))',
    ]
    assert added[0].lstrip().startswith("# top-2 without the index")
    assert "·" not in src or "·" in cand.source  # every other byte as it was


def test_grouped_topk_rewrites_the_group_scores_and_keeps_the_argmax_that_picks_experts():
    src = (SUITE / "moe_grouped_topk.py").read_text()
    (cand,) = generate(src, "moe_grouped_topk.py", ["index_free_topk"])
    removed, added = touched(src, cand.source)
    assert removed == [
        "        i1 = tl.argmax(x, axis=0)",
        '        v2 = tl.max(tl.where(offs == i1, float("-inf"), x), axis=0)',
    ]
    assert added[-1] == (
        '        v2 = tl.where((x_ntop > 1) & (v1 == v1), v1, tl.max(tl.where(x_top, float("-inf"), x), axis=0))'
    )
    # the group-keeping and expert-picking loops use their index as an output selection: left as they are
    assert cand.source.count("tl.argmax(") == 2
    assert "left as they are: grouped_topk_kernel: line 37: the index best_group is used 2 times" in cand.description
    assert "line 45: the index best is used 2 times (lines 46, 47)" in cand.description


def test_a_2d_tile_reduced_along_axis_1_broadcasts_the_max_back():
    cand = candidate(KERNELS / "top2_rows_2d.py")
    removed, added = touched((KERNELS / "top2_rows_2d.py").read_text(), cand)
    assert "    best = tl.argmax(x, axis=1)" in removed and "    second = tl.max(rest, axis=-1)" in removed
    assert "    x_top = (x == first[:, None]) | (x != x)" in added
    assert "    x_ntop = tl.sum(x_top.to(tl.int32), axis=1)" in added
    # what the cards' recognizers read: the index reduction is gone and the maxima are counted (through the
    # broadcast first[:, None]), so the value-mask-ties hazard does not fire on the candidate
    after = extract(cand).values
    assert after["index_reductions"] == 0 and not after["stores_index"]
    assert after["value_equality_mask"] and after["counts_maxima"]


def test_an_argmin_without_a_first_min_gets_one():
    removed, added = touched(
        (KERNELS / "second_min_argmin.py").read_text(), candidate(KERNELS / "second_min_argmin.py")
    )
    assert removed == [
        "    j = tl.argmin(x, axis=0)",
        '    second = tl.min(tl.where(offs == j, float("inf"), x), axis=0)',
    ]
    assert added[0] == "    x_first = tl.min(x, axis=0)"
    assert added[-1] == (
        "    second = tl.where((x_ntop > 1) & (x_first == x_first), x_first, "
        'tl.min(tl.where(x_top, float("inf"), x), axis=0))'
    )


NAIVE = (KERNELS / "moe_top2_naive.py").read_text()


@pytest.mark.parametrize(
    "source, reason",
    [
        (
            (SUITE / "argmax_dim1.py").read_text(),
            "line 21: the index of tl.max(..., return_indices=True) is stored at line 25: the index is an output",
        ),
        ((KERNELS / "top2_index_stored.py").read_text(), "line 13: the index i of tl.argmax is stored at line 16"),
        (
            (REPO / "tests" / "diagnosis" / "kernels" / "greedy_argmax.py").read_text(),
            "line 18: the index of tl.argmax is stored at line 18",
        ),
        ((KERNELS / "topk_in_place.py").read_text(), "line 17: x is masked in place (repeated argmax-and-mask"),
        ((KERNELS / "moe_top2_value.py").read_text(), "no tl.argmax/tl.argmin in any @triton.jit function"),
        (NAIVE.replace('offs == i1, -float("inf")', "offs == i1, 0.0"), "masked with 0.0, not -inf"),
        (NAIVE.replace("tl.argmax(x, axis=0)", "tl.argmax(x, axis=0, tie_break_left=False)"), "tie_break_left"),
        (
            NAIVE.replace("offs = tl.arange(0, BLOCK)", "offs = 1 + tl.arange(0, BLOCK)"),
            "the index vector offs is not tl.arange(0, B)",
        ),
        (
            NAIVE.replace("    tl.store(out_ptr + pid, first + second)", "    tl.store(out_ptr + pid, tl.sum(rest))"),
            "the masked tile rest is bound or read more than once",
        ),
        (
            NAIVE.replace("    rest = tl.where", "    x = x * 2\n    rest = tl.where"),
            "x is reassigned before the second tl.max",
        ),
        (
            NAIVE.replace("    second = tl.max(rest, axis=0)", "    second = tl.min(rest, axis=0)"),
            "the masked tile does not go straight into a tl.max",
        ),
    ],
)
def test_near_misses_are_refused_with_the_failed_precondition(source, reason):
    mod = SourceModule(source)
    assert not APPLIER.applies(mod)
    why = APPLIER.why_not(mod)
    assert why is not None and why.startswith("index_free_topk: ") and reason in why, why


INTERPRET_CHECK = """
import sys, torch
from irscope.capture.loader import load_module

def inputs(g, R, N):
    yield torch.randn(R, N, generator=g)
    yield torch.randint(0, 4, (R, N), generator=g).float()  # ties at the top
    x = torch.randint(0, 3, (R, N), generator=g).float(); x[x == 0] = float("-inf"); yield x
    x = torch.randint(0, 3, (R, N), generator=g).float(); x[x == 2] = float("inf"); yield x
    x = torch.randn(R, N, generator=g); x[torch.rand(R, N, generator=g) < 0.25] = float("nan"); yield x
    x = torch.randn(R, N, generator=g); x[0] = float("nan"); x[1, :2] = float("nan"); x[2] = float("-inf"); yield x
    yield torch.full((R, N), float("-inf"))

def same(a, b):  # bit for bit, NaN where the original has NaN
    a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    return all(
        torch.equal(torch.isnan(p), torch.isnan(q)) and torch.equal(p.nan_to_num(7.5), q.nan_to_num(7.5))
        for p, q in zip(a, b)
    )

bad = []
for orig_path, cand_path, kind in zip(*[iter(sys.argv[1:])] * 3):
    orig, cand = load_module(orig_path, "orig_" + kind), load_module(cand_path, "cand_" + kind)
    g = torch.Generator().manual_seed(0)
    for R, N in [(5, 1), (5, 3), (6, 13), (7, 24), (3, 40)]:
        for n, x in enumerate(inputs(g, R, N)):
            args = (x,) if kind != "group" else (x, 1 if N % 2 else 2)
            if not same(orig.forward(*args), cand.forward(*args)):
                bad.append(f"{orig_path} {R}x{N} input {n}")
print(bad or "agree")
"""

OWN = [("second_min_argmin", "min"), ("top2_rows_2d", "rows"), ("moe_top2_naive", "group")]


def interpret(tmp_path: Path, pairs: list[tuple[Path, str, str]]) -> str:
    args = []
    for orig, cand, kind in pairs:
        path = tmp_path / f"{orig.stem}_candidate.py"
        path.write_text(cand)
        args += [str(orig), str(path), kind]
    env = {"PATH": os.environ["PATH"], "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-c", INTERPRET_CHECK, *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


def test_candidates_agree_with_the_original_on_ties_infinities_nan_and_odd_sizes(tmp_path):
    pairs = [(KERNELS / f"{k}.py", candidate(KERNELS / f"{k}.py"), kind) for k, kind in OWN]
    assert interpret(tmp_path, pairs) == "agree"


def test_the_check_tells_a_mask_that_drops_tied_maxima_or_ignores_nan(tmp_path):
    """The same check on two wrong value-only forms: no count (card value-mask-ties), and NaN not counted."""
    cand = candidate(KERNELS / "top2_rows_2d.py")
    no_count = cand.replace("(x_ntop > 1) & (first == first)", "first != first")  # the value-mask form
    no_nan = cand.replace(" | (x != x)", "")
    assert no_count != cand and no_nan != cand
    out = interpret(tmp_path, [(KERNELS / "top2_rows_2d.py", no_count, "rows")])
    assert "input 1" in out and "input 0" not in out  # ties fail, distinct random values pass
    out = interpret(tmp_path, [(KERNELS / "top2_rows_2d.py", no_nan, "rows")])
    assert "input 4" in out and "input 1" not in out  # NaN fails, ties pass


def test_the_suite_candidates_are_correct_on_their_operators_and_compile_for_cuda90(tmp_path):
    items = [(op, op, candidate(SUITE / f"{op}.py")) for op in ("moe_group_top2", "moe_grouped_topk")]
    results = check_many(items, cache_dir=tmp_path / "triton-cache")
    assert {cid: r.failures()[:2] for cid, r in results.items() if not r.ok} == {}
    assert all(r.correct and r.runs for r in results.values())


def test_the_compiled_candidate_has_no_index_reduction(tmp_path):
    path = tmp_path / "top2_rows_2d_candidate.py"
    path.write_text(candidate(KERNELS / "top2_rows_2d.py"))
    ttir = {}
    for name, p in (("original", KERNELS / "top2_rows_2d.py"), ("candidate", path)):
        mod = load_module(p, f"top2_rows_{name}")
        req = build_request(
            mod.top2_rows_kernel,
            [TensorSpec("fp32"), TensorSpec("fp32"), TensorSpec("fp32"), 37, 13],
            {"BLOCK_M": 4, "BLOCK_N": 16},
            "cuda:90",
        )
        ttir[name] = triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options).asm["ttir"]
    assert len(INDEX_REDUCE.findall(ttir["original"])) == 1
    assert INDEX_REDUCE.findall(ttir["candidate"]) == []


def test_the_index_reduction_cards_name_the_applier():
    cards = {c.id: c for c in load_cards()}
    assert "index_free_topk" in cards["index-free-top2"].appliers
    assert "index_free_topk" in cards["value-mask-ties"].appliers
