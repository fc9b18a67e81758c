"""Program-axis tiling (program_axis_tile_cols / _rows): detection, refusals with the failed precondition, the shape
of the rewrite, and candidates that agree with the original under the interpreter on odd sizes and compile for
cuda:90."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from irscope.capture import TensorSpec, build_request
from irscope.capture.loader import load_module
from patterns.appliers import APPLIERS, SourceModule, generate
from patterns.appliers.check import check_many
from patterns.card import load_cards
from patterns.features import extract
from tests.patterns.test_appliers import touched

REPO = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"
COLS, ROWS = APPLIERS["program_axis_tile_cols"], APPLIERS["program_axis_tile_rows"]
STRIDED = ("sum_dim1", "max_dim1", "argmax_dim1", "rms_norm_ch")


def suite_source(op: str) -> str:
    return (REPO / "suite" / "kernels" / f"{op}.py").read_text()


@pytest.mark.parametrize("op", STRIDED)
def test_strided_reductions_get_columns_not_rows(op):
    mod = SourceModule(suite_source(op))
    assert COLS.why_not(mod) is None
    assert "the kernel loops (line" in ROWS.why_not(mod)
    cands = COLS.candidates(mod)
    assert [c.params["BLOCK_COL"] for c in cands] == [32, 64, 16]
    assert all(c.card == "coalesce-strided-axis" for c in cands)


def test_small_groups_get_rows_not_columns():
    mod = SourceModule(suite_source("moe_group_top2"))
    assert ROWS.why_not(mod) is None
    assert "no `index = t % N` splits tl.program_id(0) (line 12)" in COLS.why_not(mod)
    assert [c.params["tile_budget"] for c in ROWS.candidates(mod)] == [2048, 1024, 4096]


def test_sum_dim1_rewrite_shape():
    src = suite_source("sum_dim1")
    (cand, *_) = COLS.candidates(SourceModule(src))
    removed, added = touched(src, cand.source)
    body = [a.strip() for a in added]
    # the program id splits into a block of 32 consecutive d2 values, pid is rebuilt as b * D2 + d2
    assert "_pa_r = _pa_pid % _pa_nblk * BLOCK_COL + tl.arange(0, BLOCK_COL)" in body
    assert "_pa_mask = (_pa_r < D2) & (_pa_q * D2 + _pa_r < n_programs)" in body
    assert "pid = _pa_q * D2 + _pa_r" in body and "b = _pa_q" in body and "d2 = _pa_r" in body
    # a [BLOCK, BLOCK_COL] accumulator over row-strided, column-contiguous addresses, reduced over axis 0
    assert "acc = tl.zeros([BLOCK, BLOCK_COL], dtype=tl.float32)" in body
    assert (
        "acc += tl.load(base[None, :] + (offs * D2)[:, None], mask=(offs < D1)[:, None] & _pa_mask[None, :], "
        "other=0.0)" in body
    )
    assert "tl.store(out_ptr + pid, value=tl.sum(acc, axis=0), mask=_pa_mask)" in body
    assert body[-1] == (
        "sum_dim1_kernel[(triton.cdiv(_pa_programs, max(D2, 1)) * triton.cdiv(D2, _pa_lift),)](x, out, D1, D2, "
        "BLOCK=max(min(BLOCK, 16), (BLOCK) // _pa_lift), n_programs=_pa_programs, BLOCK_COL=_pa_lift)"
    )
    assert body[-3:-1] == ["_pa_programs = B * D2", "_pa_lift = 32"]
    # the host code outside the launch and the module docstring are untouched
    assert "    BLOCK = min(triton.next_power_of_2(D1), 1024)" not in removed
    assert cand.source.startswith('"""Initial Triton kernel for sum_dim1')


def test_moe_rewrite_shape():
    src = suite_source("moe_group_top2")
    (cand, *_) = ROWS.candidates(SourceModule(src))
    body = [a.strip() for a in touched(src, cand.source)[1]]
    assert "t = tl.program_id(0) * ROWS + tl.arange(0, ROWS)" in body
    assert "i1 = tl.argmax(x, axis=1)" in body and "v2 = tl.max(x2, axis=1)" in body
    assert "x2 = tl.where(offs[None, :] == i1[:, None], float('-inf'), x)" in body
    assert "_pa_lift = max(1, 2048 // (triton.next_power_of_2(GS)))" in body
    assert "gi = tl.program_id(1)" in cand.source  # the other grid axis stays a per-program scalar


MIN = (KERNELS / "strided_min.py").read_text()
SOFTMAX = (KERNELS / "small_row_softmax.py").read_text()
MIN_STORE = "    tl.store(out_ptr + b * D2 + d2, tl.reduce(acc, 0, min_nan))"


@pytest.mark.parametrize(
    "src, change, reason",
    [
        (MIN, (MIN_STORE, MIN_STORE.replace("tl.store", "tl.atomic_min")), "tl.atomic_min at line 24"),
        (
            MIN,
            (MIN_STORE, "    if d2 > 0:\n    " + MIN_STORE),
            "control flow on the lifted index at line 24",
        ),
        (
            MIN,
            (MIN_STORE, MIN_STORE + "\n    tl.store(out_ptr + b, 0.0)"),
            "the store at line 25 writes an address that does not depend on the lifted index d2",
        ),
        (MIN, ("    b = pid // D2", "    b = pid // D2 + tl.num_programs(0) * 0"), "tl.num_programs at line 18"),
        (MIN, ("d2 = pid % D2", "d2 = tl.program_id(0) % D2"), "is not a single top-level `name = tl.program_id(k)`"),
        (
            MIN,
            ("    return out", "    strided_min_kernel[(1,)](x, out, D1, D2, BLOCK=BLOCK)\n    return out"),
            "the kernel is launched 2 times",
        ),
        (MIN, ("[(B * D2,)]", "[lambda meta: (B * D2,)]"), "is not a tuple literal"),
        (MIN, ("offs * D2 + d2", "offs + d2 * D1"), "nothing to coalesce"),
        (MIN, ("for start in range(0, D1, BLOCK):", "for start in tl.range(0, d2, BLOCK):"), "loop bounds at line 20"),
        (MIN, ("tl.minimum(acc, x, propagate_nan=tl.PropagateNan.ALL)", "min_nan(acc, x)"), None),  # elementwise
        (  # a helper with control flow is not elementwise
            MIN.replace("return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)", "return a if a < b else b"),
            ("tl.minimum(acc, x, propagate_nan=tl.PropagateNan.ALL)", "min_nan(acc, x)"),
            "call of min_nan with a tile argument at line 23 is not modelled",
        ),
        (MIN, ("tl.minimum(acc, x,", "tl.minimum(acc, tl.flip(x),"), "tl.flip at line 23 is not modelled"),
        (SOFTMAX, ("    row = tl.program_id(0)", "    row = tl.program_id(0)\n    row = row + 0"), "is reassigned"),
        (
            SOFTMAX,
            ("    mask = offs < n", "    mask = offs < n\n    x_ptr += row * n\n    x_ptr -= row * n"),
            "the parameter x_ptr is reassigned with a tile or lifted value at line 13",
        ),
        (SOFTMAX, ("e / total, mask=mask", "e / total, mask=mask & (row < 10)"), None),
    ],
)
def test_near_misses_are_refused_with_the_failed_precondition(src, change, reason):
    assert change[0] in src
    mod = SourceModule(src.replace(*change))
    applier = ROWS if src is SOFTMAX else COLS
    why = applier.why_not(mod)
    if reason is None:
        assert why is None
    else:
        assert why is not None and reason in why, why
        assert not applier.applies(mod)


INTERPRET_CHECK = """
import sys, torch
from irscope.capture.loader import load_module
base, cands = load_module(sys.argv[2], "base"), [load_module(p, f"cand{i}") for i, p in enumerate(sys.argv[3:])]
torch.manual_seed(0)
ok = True
if sys.argv[1] == "min":
    for shape in [(2, 37, 5), (3, 8, 1), (1, 70, 33), (2, 1, 70)]:
        x = torch.randn(shape)
        x[0, shape[1] // 2, 0] = float("nan")  # NaN propagates
        x[-1, 0, -1] = x[-1, -1, -1] = -5.0  # ties
        want = torch.amin(x, dim=1)
        for m in [base, *cands]:
            ok &= torch.allclose(m.forward(x), want, equal_nan=True)
elif sys.argv[1] == "sumsq":
    for shape in [(2, 3, 5, 7), (1, 70, 3, 4), (3, 1, 1, 1)]:
        x = torch.randn(shape)
        for m in [base, *cands]:
            ok &= torch.allclose(m.forward(x), (x * x).sum(1), atol=1e-5)
else:
    for shape in [(5, 19), (70, 3), (1, 40), (129, 8)]:
        x = torch.randn(shape)
        want = torch.softmax(x, dim=1)
        for m in [base, *cands]:
            ok &= torch.allclose(m.forward(x), want, atol=1e-6)
print(ok)
"""


@pytest.mark.parametrize(
    "fixture, kind", [("strided_min", "min"), ("channel_sumsq", "sumsq"), ("small_row_softmax", "softmax")]
)
def test_own_kernels_agree_under_the_interpreter_and_compile(tmp_path, fixture, kind):
    src = (KERNELS / f"{fixture}.py").read_text()
    applier = ROWS if kind == "softmax" else COLS
    cands = generate(src, fixture, [applier.name])
    assert len(cands) == 3
    paths = []
    for i, c in enumerate(cands):
        paths.append(tmp_path / f"{fixture}_{i}.py")
        paths[-1].write_text(c.source)
    env = {"PATH": os.environ["PATH"], "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-c", INTERPRET_CHECK, kind, str(KERNELS / f"{fixture}.py"), *map(str, paths)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.stdout.strip() == "True", run.stderr[-2000:]
    mod = load_module(paths[0], f"cand_{fixture}")
    if kind == "min":
        args = [TensorSpec("fp32"), TensorSpec("fp32"), 4096, 4096]
        kw = {"BLOCK": 16, "n_programs": 16 * 4096, "BLOCK_COL": 32}
        req = build_request(mod.strided_min_kernel, args, kw, "cuda:90")
    elif kind == "sumsq":
        args = [TensorSpec("fp32"), TensorSpec("fp32"), 64, 4096]
        req = build_request(mod.channel_sumsq_kernel, args, {"n_programs": 4 * 4096, "BLOCK_COL": 32}, "cuda:90")
    else:
        args = [TensorSpec("fp32"), TensorSpec("fp32"), 19]
        req = build_request(mod.row_softmax_kernel, args, {"BLOCK": 32, "n_programs": 4096, "ROWS": 64}, "cuda:90")
    compiled = triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
    assert "ptx" in compiled.asm


def test_suite_candidates_are_correct_and_compile_for_cuda90(tmp_path):
    """The first candidate for each of the five motivating operators, on their small cases (D2 = 5, 1, 3 against
    32 columns; C = 3 and 70 channels; T = 5, 3, 4 tokens against 64 rows): every input kind, cuda:90. (The other
    variants differ only in the LIFT value; `patterns apply --check OP` runs them all.)"""
    items = []
    for op in (*STRIDED, "moe_group_top2"):
        (c, *_) = generate(suite_source(op), op, [COLS.name, ROWS.name])
        items.append((f"{op}.{c.applier}", op, c.source))
    results = check_many(items, cache_dir=tmp_path / "triton-cache")
    assert {cid: r.failures()[:1] for cid, r in results.items() if not r.ok} == {}
    assert all(r.correct and r.compiled for r in results.values())


@pytest.mark.parametrize("op, applier", [("sum_dim1", COLS), ("rms_norm_ch", COLS), ("moe_group_top2", ROWS)])
def test_the_cards_recognize_the_rewrite(op, applier):
    """The card's `recognize` predicates (before → after features) hold for the candidate: the round that applied
    it is attributed to the card."""
    src = suite_source(op)
    (cand, *_) = applier.candidates(SourceModule(src))
    before, after = extract(src).values, extract(cand.source).values
    card = next(c for c in load_cards() if c.id == applier.card)

    def lookup(name: str):
        side, _, feature = name.partition(".")
        return (before if side == "before" else after).get(feature.removeprefix("src."))

    assert any(pred.evaluate(lookup).value for pred in card.recognize), (before, after)


@pytest.mark.parametrize(
    "change",
    [
        ("        acc = tl.minimum(", "        n_chunks = 1\n        acc = tl.minimum("),  # counts chunks
        ('other=float("inf"))', "other=2.0)"),  # pads with a value that is not an identity
        ("    tl.store(out_ptr", "    tl.store(out_ptr + start * 0"),  # the chunk start outlives the loop
    ],
)
def test_a_chunk_loop_that_may_depend_on_its_chunk_size_keeps_its_block(tmp_path, change):
    """The BLOCK shrinks only for chunk loops whose result cannot depend on the chunk size; otherwise BLOCK stays
    and the column count is sized from it at run time (the tile stays at most 4096 elements)."""
    src = MIN.replace(*change)
    cands = COLS.candidates(SourceModule(src))
    launch = next(line.strip() for line in cands[0].source.splitlines() if "strided_min_kernel[" in line)
    assert "BLOCK=BLOCK, n_programs=_pa_programs" in launch
    assert "    _pa_lift = max(1, min(32, 4096 // (BLOCK)))" in cands[0].source
    if change[1].startswith("        n_chunks"):  # still the same minimum: check the run-time-sized columns
        path = tmp_path / "cand.py"
        path.write_text(cands[0].source)
        env = {"PATH": os.environ["PATH"], "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
        run = subprocess.run(
            [sys.executable, "-c", INTERPRET_CHECK, "min", str(KERNELS / "strided_min.py"), str(path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.stdout.strip() == "True", run.stderr[-2000:]
