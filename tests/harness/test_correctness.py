"""The runner's and the judge's checks of one run: an input the forward touched is caught bit for bit, whatever it
holds; outputs must be plain tensors of their own; the judge names what is wrong."""

import pytest
import torch
import triton
import triton.language as tl

from ladder.harness.correctness import FatalDeviceError, judge, output_problems, run_forward, same_bits
from suite.compare import verify
from suite.operator import Case, get_operator


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
    same_width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    assert not same_bits(x, x.view(same_width))  # the same bits as another dtype are another tensor
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


@pytest.fixture
def interpreted(monkeypatch):
    """The monitor's CPU mode, as in a CPU runner: Triton launches go through the interpreter."""
    monkeypatch.setattr(triton.knobs.runtime, "interpret", True)


@pytest.fixture
def gelu():
    op = get_operator("new_gelu")
    case = op.small_cases[0]
    (x,) = op.make_inputs(case, 0, "cpu", "random")
    return op, case, x


def test_a_forward_that_rewrites_a_nan_payload_in_its_input_is_caught(gelu, interpreted):
    op, case, x = gelu
    x[0, 0] = float("nan")

    def forward(t: torch.Tensor) -> torch.Tensor:
        t.view(torch.int32)[0, 0] ^= 1  # the input's NaN gets another payload; every value still compares equal
        return op.reference(t.clone())

    result, _ = run_forward(op, forward, case, (x,), kind="random", seed=0, device="cpu")
    assert "input 0 was modified by the forward call" in result.problems


def test_the_judge_accepts_the_reference_and_names_what_is_wrong_otherwise(gelu):
    op, case, x = gelu
    right = judge(op, case, (x,), op.reference(x.clone()), "cpu")
    assert right.ok and right.numeric_ok and right.problems == [] and right.max_abs < 1e-5  # oracle in float64
    off = op.reference(x.clone())
    off[0, 0] += 1.0
    wrong = judge(op, case, (x,), off, "cpu")
    assert not wrong.ok and not wrong.numeric_ok and wrong.max_abs == pytest.approx(1.0)
    assert len(wrong.problems) == 1 and wrong.problems[0].startswith("wrong output: ")
    # right numbers in a wider dtype than the operator's contract: numerically right, still rejected
    wide = judge(op, case, (x,), op.reference(x.clone()).double(), "cpu")
    assert wide.numeric_ok and not wide.ok
    assert wide.problems == ["output 0 is torch.float64; the operator's dtype contract is torch.float32"]


def test_outputs_must_be_plain_tensors_on_the_device_with_storage_of_their_own():
    base = torch.zeros(16)
    x = base[:8]
    assert output_problems(base[8:], (x,), "cpu") == []  # adjacent to the input, not on it
    assert output_problems(base[7:], (x,), "cpu") == ["output 0 aliases an input's memory"]  # one element shared
    assert output_problems(base[9::2], (base[:10:2],), "cpu") == []  # strided: spans end at the last element
    assert output_problems(base[8::2], (base[:9:2],), "cpu") == ["output 0 aliases an input's memory"]
    assert output_problems((torch.zeros(2), [1.0]), (), "cpu") == ["output 1 is list, not exactly torch.Tensor"]
    assert output_problems(torch.zeros(2, device="meta"), (), "cpu") == ["output 0 is on meta, not cpu"]
    hollow = torch.zeros(8)
    hollow.untyped_storage().resize_(16)  # 4 of the 8 elements behind it
    assert output_problems(hollow, (), "cpu") == ["output 0 has no materialized storage behind it"]
    assert output_problems(base[4:8], (x,), "cpu") == ["output 0 aliases an input's memory"]  # inside the input
    assert output_problems(base[:8], (base[8:],), "cpu") == []  # the input right after it
    assert output_problems(torch.zeros(2), (), "cuda") == ["output 0 is on cpu, not cuda"]
    assert output_problems((1.0, torch.zeros(2, device="meta"), [2]), (), "cpu") == [
        "output 0 is float, not exactly torch.Tensor",
        "output 1 is on meta, not cpu",
        "output 2 is list, not exactly torch.Tensor",
    ]
    assert output_problems(torch.zeros(0), (torch.zeros(0),), "cpu") == []  # empty: nothing to alias or hold
    assert output_problems(torch.zeros(2, dtype=torch.int64), (), "cpu", torch.float32) == []  # integers keep theirs


def test_the_runner_reports_a_raising_forward_and_a_replaced_input_and_ends_on_a_broken_device(gelu, interpreted):
    """A forward that raised is told that only (no missing launch, no output on top)."""
    op, case, x = gelu

    def raising(t):
        raise ValueError("no kernel for this shape")

    result, out = run_forward(op, raising, case, (x,), kind="random", seed=3, device="cpu")
    assert out is None and (result.kind, result.seed, result.ok) == ("random", 3, False)
    assert len(result.problems) == 1
    assert result.problems[0].startswith("forward raised ValueError: no kernel for this shape\n")

    def replacing(t):
        t.set_(torch.zeros_like(t))  # same values nowhere near, in a storage of its own
        return op.reference(t.clone())

    result, _ = run_forward(op, replacing, case, (x.clone(),), kind="random", seed=0, device="cpu")
    assert "an input tensor's storage was replaced" in result.problems

    def broken(t):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    with pytest.raises(FatalDeviceError, match="RuntimeError: CUDA error: an illegal memory access"):
        run_forward(op, broken, case, (x,), kind="random", seed=0, device="cpu")


def test_the_judge_holds_an_output_to_the_tolerance_of_the_cases_reduction_length():
    """l2_norm's tolerance grows with the square root of the reduction's length: the case's row length, not the
    output's element count (what `verify` falls back to without a length). An error the looser one would pass is
    refused."""
    op = get_operator("l2_norm")
    case = Case("rows", {"M": 64, "N": 1024})  # 64 K elements: a looser bound than 1024-long rows allow
    (x,) = op.make_inputs(case, 0, "cpu", "random")
    ref = op.reference(x.clone())
    errors = [2.0 ** (-k / 4) for k in range(160, 0, -1)]

    def ok(error: float, length: int | None) -> bool:
        return verify(op, (x,), ref + error * ref.abs().max(), length).ok

    between = next(e for e in errors if ok(e, None) and not ok(e, op.reduction_len(case)))
    verdict = judge(op, case, (x,), ref + between * ref.abs().max(), "cpu")
    assert not verdict.ok and (verdict.case, verdict.kind, verdict.seed) == (case.name, "", 0)


def test_an_honest_forward_has_no_problem_and_its_findings_are_exactly_what_went_wrong(gelu, interpreted):
    """A forward that launches a Triton kernel (interpreted) and returns its own tensor: nothing to report. One
    given a non-tensor argument beside its tensor leaves that argument alone; one returning the wrong dtype is told
    so."""
    op, case, x = gelu

    @triton.jit  # made while the interpreter is on: an interpreted kernel, as in a CPU runner
    def doubled(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    def honest(t, *rest):
        out = torch.empty_like(t)
        doubled[(triton.cdiv(t.numel(), 1024),)](t, out, t.numel(), BLOCK=1024)
        return out

    result, out = run_forward(op, honest, case, (x,), kind="random", seed=0, device="cpu")
    assert result.problems == [] and result.launches == 1 and torch.equal(out, x * 2)
    assert result.case == case.name and 0 < result.seconds < 3
    result, _ = run_forward(op, honest, case, (x, 2), kind="random", seed=0, device="cpu")
    assert result.problems == []

    def wider(t):
        out = torch.empty_like(t, dtype=torch.float64)  # the kernel writes float64: no copy the monitor would see
        doubled[(triton.cdiv(t.numel(), 1024),)](t, out, t.numel(), BLOCK=1024)
        return out

    result, _ = run_forward(op, wider, case, (x,), kind="random", seed=0, device="cpu")
    assert result.problems == ["output 0 is torch.float64; the operator's dtype contract is torch.float32"]

    # returning nothing: the monitor's finding says enough; after a launch, the output's
    result, _ = run_forward(op, lambda t: None, case, (x,), kind="random", seed=0, device="cpu")
    assert [p.split(" (")[0] for p in result.problems] == ["no Triton kernel was launched"]

    def launches_and_returns_nothing(t):
        honest(t)

    result, _ = run_forward(op, launches_and_returns_nothing, case, (x,), kind="random", seed=0, device="cpu")
    assert result.problems == ["output 0 is NoneType, not exactly torch.Tensor"]
    # torch doing the work in a wider dtype: the monitor's findings and the output's, none replacing another
    result, _ = run_forward(op, lambda t: (t * 2).double(), case, (x,), kind="random", seed=0, device="cpu")
    assert len(result.problems) == 3 and result.problems[-1].startswith("output 0 is torch.float64")


def test_a_forward_that_takes_the_monitor_off_torchs_dispatch_stack_is_caught(gelu, interpreted, monkeypatch):
    """A forward that returns a right answer after popping the monitor's recorder off torch's dispatch stack (its
    torch compute then goes unseen) fails when the monitor lets go: that failure stays a problem of the run, with
    nothing the monitor or the output adds taking its place."""
    from torch.utils._python_dispatch import _pop_mode
    from triton.runtime.interpreter import InterpretedFunction

    op, case, x = gelu
    original_run = InterpretedFunction.run
    monkeypatch.setattr(InterpretedFunction, "run", original_run)  # put back should the monitor fail to

    @triton.jit
    def doubled(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    def unseen(t):
        _pop_mode()
        out = torch.empty_like(t)
        doubled[(triton.cdiv(t.numel(), 1024),)](t, out, t.numel(), BLOCK=1024)  # a launch, as the monitor wants
        return op.reference(t)  # computed by torch where the monitor no longer looks

    result, out = run_forward(op, unseen, case, (x,), kind="random", seed=0, device="cpu")
    assert torch.equal(out, op.reference(x)) and result.launches == 1 and result.aten_ops == {}
    assert len(result.problems) == 1 and result.problems[0].startswith("forward raised RuntimeError: "), result
    # the recorder's failed exit does not stop the monitor's other undos: launches are no longer counted
    assert InterpretedFunction.run is original_run


def test_a_run_records_its_seconds_to_a_tenth_of_a_millisecond(gelu, interpreted):
    """The runner's seconds, as the evaluation sums and records them: rounded to four places (a run of a forward
    that does nothing takes tens of microseconds, so five places would show in every run below)."""
    op, case, x = gelu
    for _ in range(5):
        result, _ = run_forward(op, lambda t: None, case, (x,), kind="random", seed=0, device="cpu")
        assert 0 <= result.seconds < 1 and result.seconds == round(result.seconds, 4), result.seconds
