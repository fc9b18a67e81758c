"""#24 max_pool2d (KernelBench L1-42): window stencil with −inf padding semantics and several k/s/p settings."""

import torch
import torch.nn.functional as F

from suite.operator import EXTREME, RANDOM, Case, Operator, Tolerance


def _case(name: str, n: int, c: int, h: int, w: int, k: int, s: int, p: int, role: str = "") -> Case:
    return Case(name, {"N": n, "C": c, "H": h, "W": w, "k": k, "s": s, "p": p}, role)


def out_hw(case: Case) -> tuple[int, int]:
    k, s, p = case.shape["k"], case.shape["s"], case.shape["p"]
    return (case.shape["H"] + 2 * p - k) // s + 1, (case.shape["W"] + 2 * p - k) // s + 1


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, int, int, int]:
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (case.shape["N"], case.shape["C"], case.shape["H"], case.shape["W"])
    x = torch.rand(shape, generator=g, device=g.device, dtype=torch.float32)
    if kind == EXTREME:
        # All values negative: a kernel that pads with 0 instead of −inf returns 0 on every padded border window.
        x = -1.0 - 30.0 * x
    elif kind != RANDOM:
        raise ValueError(f"max_pool2d: unknown input kind {kind!r}; it takes {RANDOM!r} and {EXTREME!r}")
    return x.to(device), case.shape["k"], case.shape["s"], case.shape["p"]


def reference(x: torch.Tensor, k: int, s: int, p: int) -> torch.Tensor:
    return F.max_pool2d(x, k, s, p, 1)


def oracle(x: torch.Tensor, k: int, s: int, p: int) -> torch.Tensor:
    return F.max_pool2d(x.double(), k, s, p, 1).to(x.dtype)


def _bytes(case: Case) -> int:
    oh, ow = out_hw(case)
    nc = case.shape["N"] * case.shape["C"]
    return 4 * (nc * case.shape["H"] * case.shape["W"] + nc * oh * ow)


OPERATOR = Operator(
    number=24,
    name="max_pool2d",
    source="KernelBench L1-42",
    category="window",
    dtype="fp32",
    cases=[
        _case("c1", 16, 64, 512, 512, 4, 1, 1, "large"),
        _case("c2", 64, 128, 112, 112, 3, 2, 1, "mid"),
        _case("c3", 128, 256, 56, 56, 2, 2, 0, "mid"),
        _case("c4", 8, 32, 1024, 1024, 3, 1, 1, "large"),
        _case("c5", 128, 64, 64, 64, 4, 1, 1, "stress"),
    ],
    # One small case per k/s/p family of the real cases, with odd H and W; p=1 exercises the −inf padding.
    small_cases=[
        _case("s1", 2, 3, 9, 11, 4, 1, 1),
        _case("s2", 2, 2, 9, 7, 3, 2, 1),
        _case("s3", 1, 3, 6, 10, 2, 2, 0),
        _case("s4", 1, 2, 7, 5, 3, 1, 1),
    ],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=_bytes,
    flops=lambda c: 0,
    # A max selects one input value: every correct kernel is bit-exact.
    tolerance=Tolerance("float", rtol=0.0, atol=0.0, rel_l2=0.0),
    input_kinds=(RANDOM, EXTREME),
    notes="Inputs are (x, k, s, p); dilation 1, ceil_mode False. Windows of the random inputs (rand in [0,1)) "
    "never distinguish 0 from −inf padding; the extreme kind (all values in [−31, −1)) does.",
)
