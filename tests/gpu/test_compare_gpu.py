"""The fused comparison on a GPU gives suite.compare's verdicts on the CPU, and reaches past 2³¹ elements."""

import pytest
import torch

from suite.compare import compare
from suite.operator import Tolerance

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

FP32 = Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5)


def _variants(r: torch.Tensor) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    over = r.clone()
    over[7] += 1e-2
    over[-3] -= 1.0
    nan = r.clone()
    nan[100] = float("nan")
    ri = r.clone()
    ri[5] = -float("inf")
    oi = ri.clone()
    oi[5] = float("inf")
    drift = r * (1 + 5e-5)
    return {"same": (r.clone(), r), "over": (over, r), "nan": (nan, r), "inf": (oi, ri), "drift": (drift, r)}


def test_gpu_verdicts_are_the_cpu_verdicts():
    r = torch.randn(3_000_001, generator=torch.Generator().manual_seed(1))
    for name, (o, ref) in _variants(r).items():
        cpu, gpu = compare(o, ref, FP32), compare(o.cuda(), ref.cuda(), FP32)
        assert (gpu.ok, gpu.detail) == (cpu.ok, cpu.detail), name
        assert gpu.max_abs == cpu.max_abs and gpu.rel_l2 == pytest.approx(cpu.rel_l2, rel=1e-9), name


def test_an_error_past_two_to_the_31_elements_is_found():
    n = (1 << 31) + 1000
    r = torch.ones(n, dtype=torch.float16, device="cuda")
    o = r.clone()
    o[n - 2] = 1.5
    v = compare(o, r, Tolerance("float", rtol=1e-3, atol=1e-3, rel_l2=1.0))
    assert not v.ok and "1 elements outside" in v.detail and "worst got 1.5 expected 1" in v.detail
