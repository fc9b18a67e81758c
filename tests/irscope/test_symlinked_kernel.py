"""A kernel imported through a symbolic link (a checkout under a linked folder, a scratch copy of a repository)
is attributed like any other: Triton names the file in its locations as the import did, and the trajectory must
name it the same way, or no IR line belongs to the kernel and every per-line counter and hazard vanishes."""

from pathlib import Path

import irscope
from irscope import hazards
from irscope.capture.loader import load_module
from irscope.signatures import by_line

KERNELS = Path(__file__).resolve().parents[1] / "diagnosis" / "kernels"
SUM_LINE = 18  # rmsnorm_wide.py: `mean_sq = tl.sum(x * x, axis=0) / n_cols`, the reduction across 8 warps


def test_a_kernel_imported_through_a_link_keeps_its_lines_and_hazards(tmp_path):
    (tmp_path / "linked").symlink_to(KERNELS)
    module = load_module(tmp_path / "linked" / "rmsnorm_wide.py", "linked_rmsnorm")
    traj = irscope.capture(
        module.rmsnorm_kernel, "*fp16", "*fp16", "*fp16", 8192, 8192, 1e-6, BLOCK=8192, num_warps=8, target="cuda:90"
    )
    assert by_line(traj)["ptx"][SUM_LINE]["sync.shuffle"] > 0
    found = hazards.find(traj)
    assert [(h.symptom, h.lines) for h in found.hazards] == [("cross-warp-reduction", (SUM_LINE,))]
