"""The runner's input check: an input the forward touched is caught bit for bit, whatever it holds."""

import pytest
import torch

from ladder.harness.correctness import run_forward, same_bits
from suite.operator import get_operator


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
def test_same_bits_tells_nan_payloads_and_signed_zeros_apart(dtype):
    x = torch.tensor([0.0, 1.5, float("nan"), -2.0], dtype=dtype)
    assert same_bits(x, x.clone())
    negative_zero = x.clone()
    negative_zero[0] = -0.0
    assert not same_bits(x, negative_zero)
    other_nan = x.clone()
    bits = other_nan.view(torch.uint8)
    bits[2 * x.element_size()] ^= 1  # the lowest mantissa bit of the NaN: still a NaN, another payload
    assert torch.isnan(other_nan[2]) and not same_bits(x, other_nan)
    assert not same_bits(x, x.to(torch.float32 if dtype != torch.float32 else torch.float64))
    assert not same_bits(x, x[:3])


def test_same_bits_on_integers_booleans_and_strided_views():
    m = torch.arange(24, dtype=torch.int64).reshape(4, 6)
    assert same_bits(m.t(), m.clone().t()) and not same_bits(m.t(), (m + (m == 5)).t())
    f = torch.randn(4, 6)[:, ::2]
    g = f.clone()
    assert same_bits(f, g)
    g[1, 1] = torch.nextafter(g[1, 1], torch.tensor(float("inf")))
    assert not same_bits(f, g)
    b = torch.tensor([True, False])
    assert same_bits(b, b.clone()) and not same_bits(b, ~b)


def test_a_forward_that_rewrites_a_nan_payload_in_its_input_is_caught(monkeypatch):
    import triton

    monkeypatch.setattr(triton.knobs.runtime, "interpret", True)  # the monitor's CPU mode, as in a CPU runner
    op = get_operator("new_gelu")
    case = op.small_cases[0]
    (x,) = op.make_inputs(case, 0, "cpu", "random")
    x[0, 0] = float("nan")

    def forward(t: torch.Tensor) -> torch.Tensor:
        t.view(torch.int32)[0, 0] ^= 1  # the input's NaN gets another payload; every value still compares equal
        return op.reference(t.clone())

    result, _ = run_forward(op, forward, case, (x,), kind="random", seed=0, device="cpu")
    assert "input 0 was modified by the forward call" in result.problems
