"""persistent_grid: a 1-D grid kernel loops over its tiles with a stride of tl.num_programs(0). On the CPU the
launch keeps one program per tile, so the loop itself is checked by launching the candidate kernels with fewer
programs than tiles under the interpreter; every candidate also runs forward on the operators' small cases and
compiles for cuda:90 (check_candidates)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from irscope.capture import build_request
from irscope.capture.loader import load_module
from patterns.appliers import APPLIERS, generate
from patterns.appliers.check import check_many
from patterns.appliers.source import SourceModule
from tests.patterns.test_appliers import touched

REPO = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"
ROWS = (KERNELS / "row_l2_normalize.py").read_text()
APPLIER = APPLIERS["persistent_grid"]
SUITE = REPO / "suite" / "kernels"


def test_the_body_after_the_program_id_moves_into_the_tile_loop_and_the_launch_counts_sms():
    cands = generate(ROWS, "row_l2_normalize.py", ["persistent_grid"])
    assert [c.params["programs_per_sm"] for c in cands] == [4, 8, 2]  # no tl.dot: several programs per SM
    c = cands[0]
    lines, new = ROWS.splitlines(), c.source.splitlines()
    removed, added = touched(ROWS, c.source)
    assert lines[8] == removed[0] and new[8] == lines[8].replace(
        "BLOCK: tl.constexpr)", "BLOCK: tl.constexpr, NUM_TILES)"
    )
    # the docstring and `cols0` stay before the loop; `row = tl.program_id(0)` becomes its header
    assert new[9:11] == lines[9:11] and lines[11] == "    row = tl.program_id(0)" not in new
    assert "    for row in range(tl.program_id(0), NUM_TILES, tl.num_programs(0)):" in added
    body = lines[12 : lines.index("def forward(x: torch.Tensor) -> torch.Tensor:") - 2]
    start = new.index("    for row in range(tl.program_id(0), NUM_TILES, tl.num_programs(0)):") + 1
    assert new[start : start + len(body)] == [("    " + ln) if ln else ln for ln in body]
    assert (
        "    _num_tiles = M" in added
        and "def _persistent_programs(tiles: int, device: torch.device, per_sm: int) -> int:" in added
    )
    assert (
        "    row_normalize_kernel[(_persistent_programs(_num_tiles, x.device, 4),)](x, out, N, x.stride(0), "
        "x.stride(1), out.stride(0), 1e-6, BLOCK=BLOCK, NUM_TILES=_num_tiles)"
    ) in added
    matmul = (SUITE / "matmul_irregular.py").read_text()
    assert [c.params["programs_per_sm"] for c in generate(matmul, "m.py", ["persistent_grid"])] == [1, 2, 4]


# Launches each candidate kernel directly with fewer programs than tiles: every tile must still be written once.
FEW_PROGRAMS = """
import sys, torch, triton
from irscope.capture.loader import load_module
torch.manual_seed(0)
kind, original, candidate = sys.argv[1], load_module(sys.argv[2], "orig"), load_module(sys.argv[3], "cand")
if kind == "rows":
    x = torch.randn(50, 37).t()  # 37 rows of 50, strided
    want = original.forward(x)
    for programs in (1, 3, 37):
        out = torch.full_like(want, float("nan"))
        candidate.row_normalize_kernel[(programs,)](x, out, 50, x.stride(0), x.stride(1), out.stride(0), 1e-6,
                                                     BLOCK=64, NUM_TILES=37)
        print(torch.equal(out, want))
    print(torch.equal(candidate.forward(x), want))
else:
    x = torch.randn(1001)
    want = original.forward(x)
    kernel = getattr(candidate, kind + "_kernel")
    for programs in (1, 3):
        out = torch.full_like(x, float("nan"))
        kernel[(programs,)](x, out, 1001, BLOCK=256, NUM_TILES=triton.cdiv(1001, 256))
        print(torch.equal(out, want))
    print(torch.equal(candidate.forward(x), want))
"""


@pytest.mark.parametrize("kind, path", [("rows", KERNELS / "row_l2_normalize.py"), ("softplus", SUITE / "softplus.py")])
def test_fewer_programs_than_tiles_give_the_same_result_under_the_interpreter(tmp_path, kind, path):
    src = path.read_text()
    (orig := tmp_path / "original.py").write_text(src)
    (cand := tmp_path / "candidate.py").write_text(generate(src, path.name, ["persistent_grid"])[0].source)
    env = {"PATH": os.environ["PATH"], "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-c", FEW_PROGRAMS, kind, str(orig), str(cand)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    expected = 4 if kind == "rows" else 3
    assert run.stdout.split() == ["True"] * expected, run.stderr[-2000:]
    if kind == "rows":
        kernel = load_module(cand, "persistent_rows").row_normalize_kernel
        req = build_request(
            kernel, ["*fp32", "*fp32", 4097, 1, 4097, 4097, 1e-6], {"BLOCK": 64, "NUM_TILES": 1000}, "cuda:90"
        )
        assert "cubin" in triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options).asm


def test_every_candidate_for_new_gelu_and_softplus_is_correct_and_compiles_for_cuda90(tmp_path):
    items = [
        (f"{op}.{i}", op, c.source)
        for op in ("new_gelu", "softplus")
        for i, c in enumerate(generate((SUITE / f"{op}.py").read_text(), op, ["persistent_grid"]))
    ]
    results = check_many(items, cache_dir=tmp_path / "triton-cache")
    assert len(results) == 6 and {cid: r.failures()[:1] for cid, r in results.items() if not r.ok} == {}


@pytest.mark.parametrize(
    "change, reason",
    [
        (
            (
                "    acc = tl.zeros((BLOCK,), dtype=tl.float32)\n",
                "    if row >= n_cols:\n        return\n    acc = tl.zeros((BLOCK,), dtype=tl.float32)\n",
            ),
            "row_normalize_kernel returns at line 14: inside the tile loop a return would skip the other tiles",
        ),
        (
            ("inv = 1.0 /", "inv = tl.num_programs(0) * 0 + 1.0 /"),
            "reads tl.program_id/tl.num_programs more than once (lines 18 besides 12)",
        ),
        (
            (
                "tl.store(out_ptr + row * stride_om + cols, x * inv,",
                "tl.atomic_add(out_ptr + row * stride_om + cols, x * inv,",
            ),
            "row_normalize_kernel uses atomics (line 22)",
        ),
        (
            ("    cols0 = tl.arange(0, BLOCK)\n", "    cols0 = tl.arange(0, BLOCK)\n    inv = 1.0\n"),
            "row_normalize_kernel rebinds inv after its program id: the loop would carry them",
        ),
        (("[(M,)]", "[(M, 1)]"), "the grid of row_normalize_kernel is not a 1-D tuple (line 29)"),
        (("[(M,)]", "[lambda META: (M,)]"), "the grid of row_normalize_kernel is a function of the launch's META"),
        (
            ("    return out", "    row_normalize_kernel[(1,)](x, out, N, 0, 0, 0, 1e-6, BLOCK=BLOCK)\n    return out"),
            "row_normalize_kernel is launched more than once",
        ),
        (
            ("    row = tl.program_id(0)", "    row = tl.program_id(1)"),
            "reads a program id other than axis 0 at line 12",
        ),
        (
            ("out = torch.empty((M, N), device=x.device, dtype=torch.float32)", "out = torch.empty((M, N))"),
            "",  # `x` is still a host parameter passed to a pointer: its device is known
        ),
    ],
)
def test_kernels_a_tile_loop_would_change_are_refused_with_the_reason(change, reason):
    mod = SourceModule(ROWS.replace(*change))
    why = APPLIER.why_not(mod)
    if not reason:
        assert why is None and APPLIER.applies(mod)
        return
    assert why is not None and why.startswith("persistent_grid: row_normalize_kernel: ") and reason in why, why
    two_d = SourceModule((KERNELS / "transpose_tiles.py").read_text())
    assert APPLIER.why_not(two_d) == (
        "persistent_grid: transpose_kernel: transpose_kernel reads tl.program_id/tl.num_programs more than once "
        "(lines 11 besides 10)"
    )
