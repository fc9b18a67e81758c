"""Per-line counts of inlined library calls (tl.max, tl.sum, tl.argmax, tl.cumsum, a softmax's sum) fall on the
kernel line that calls them at every stage, SASS included, on a real compile (cuda:90, nvdisasm -gp)."""

from pathlib import Path

import pytest

import irscope
from irscope.signatures.engine import UNATTRIBUTED, Analyzer

from .inline_kernels import inlined_calls

SOURCE = (Path(__file__).parent / "inline_kernels.py").read_text().splitlines()
LINES = {
    tag: i
    for i, text in enumerate(SOURCE, start=1)
    for tag in ("max2", "max", "sum", "argmax", "cumsum", "softmax-sum")
    if text.endswith(f"# LINE {tag}")
}
CALLS = {LINES[t] for t in ("max", "sum", "argmax", "cumsum", "softmax-sum", "max2")}


@pytest.fixture(scope="module")
def signatures():
    traj = irscope.capture(inlined_calls, "*fp32", "*fp32", 100, BLOCK=128, num_warps=4, target="cuda:90")
    assert "sass" in traj.artifacts
    return Analyzer(traj).stage_signatures()


def _lines(sig, counter: str) -> dict[int, int]:
    return {line: c[counter] for line, c in sig.lines.items() if c.get(counter)}


def test_the_kernel_lines_are_distinct():
    assert len(CALLS) == 6


@pytest.mark.parametrize("counter", ["sync.shuffle", "sync.barrier"])
def test_reduction_code_lands_on_the_calling_lines(signatures, counter):
    """LLVM IR carries the inlining chain (DILocation inlinedAt): its per-line counts are the reference. PTX
    has the same instructions, so the same counts on the same lines; SASS falls on the same lines (ptxas may
    merge or drop a few instructions, never move them to another call)."""
    truth = _lines(signatures["llvm"], counter)
    assert set(truth) <= CALLS and len(truth) >= 4, truth
    assert _lines(signatures["ptx"], counter) == truth
    sass = _lines(signatures["sass"], counter)
    assert UNATTRIBUTED not in sass
    assert set(sass) == set(truth), (sass, truth)
    for line in (LINES["max"], LINES["max2"], LINES["sum"]):  # butterfly shuffles: one SHFL per shfl.sync
        if counter == "sync.shuffle":
            assert sass[line] == truth[line], (line, sass, truth)


def test_nothing_lands_in_the_library(signatures):
    """No count at any stage is left on a line outside the kernel (UNATTRIBUTED) for the reduction counters."""
    for stage in ("ptx", "sass"):
        for counter in ("sync.shuffle", "sync.barrier", "mem.shared_load", "mem.shared_store"):
            assert UNATTRIBUTED not in _lines(signatures[stage], counter), (stage, counter)
