"""#16 cross_entropy (KernelBench L1-95): row log-sum-exp, a gather of the target logit, and a global mean;
vocabularies up to 262k."""

import torch
import torch.nn.functional as F

from suite.operator import EXTREME, RANDOM, Case, Operator, Tolerance


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    B, V = case.shape["B"], case.shape["V"]
    if kind == RANDOM:
        logits = torch.randn((B, V), generator=g, device=g.device, dtype=torch.float32)
    elif kind == EXTREME:
        # Uniform in ±100: exp overflows fp32 above 88, so a log-sum-exp without the max shift gives inf.
        logits = (torch.rand((B, V), generator=g, device=g.device, dtype=torch.float32) * 2 - 1) * 100
    else:
        raise ValueError(f"cross_entropy: unknown input kind {kind!r}; it takes {RANDOM!r} and {EXTREME!r}")
    target = torch.randint(0, V, (B,), generator=g, device=g.device)
    return logits.to(device), target.to(device)


def reference(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits, target)


def oracle(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.double(), target).to(logits.dtype)


OPERATOR = Operator(
    number=16,
    name="cross_entropy",
    source="KernelBench L1-95",
    category="loss",
    dtype="fp32",
    cases=[
        Case("c1", {"B": 32768, "V": 4096}, "small"),
        Case("c2", {"B": 8192, "V": 32000}, "mid"),
        Case("c3", {"B": 4096, "V": 128256}, "large"),
        Case("c4", {"B": 65536, "V": 1000}, "odd"),
        Case("c5", {"B": 1024, "V": 262144}, "stress"),
    ],
    small_cases=[Case("s1", {"B": 4, "V": 1500}), Case("s2", {"B": 7, "V": 33})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 4 * c.shape["B"] * c.shape["V"] + 8 * c.shape["B"] + 4,
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM, EXTREME),
    notes="Inputs are (logits fp32 (B, V), targets int64 (B,)); output is the scalar mean loss.",
)
