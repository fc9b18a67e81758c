"""An operator of your own, for `ladder optimize --op-file docs/examples/rmsnorm/op.py`: RMSNorm over rows,
y = x / sqrt(mean(x²) + eps) * w, fp32. Everything the loop needs is here: how to make inputs for a case, the
PyTorch reference (timed as the baseline on a GPU), a high-precision oracle (correctness), the cases (timed on a
GPU) and small cases (checked under Triton's interpreter on a CPU), the tolerance, the minimum bytes moved (speed
of light) and the initial kernel module the loop starts from."""

import torch

from suite.operator import RANDOM, Case, Operator, Tolerance

EPS = 1e-6


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"rmsnorm: unknown input kind {kind!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    M, N = case.shape["M"], case.shape["N"]
    return torch.randn((M, N), generator=g, device=device), torch.rand((N,), generator=g, device=device) + 0.5


def reference(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * w


def oracle(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return reference(x.double(), w.double()).to(x.dtype)


OPERATOR = Operator(
    number=0,
    name="my_rmsnorm",
    source="docs/examples/rmsnorm",
    category="row-reduction",
    dtype="fp32",
    cases=[Case("c1", {"M": 8192, "N": 4096}, "mid"), Case("c2", {"M": 1024, "N": 16384}, "large")],
    small_cases=[Case("s1", {"M": 3, "N": 1000}), Case("s2", {"M": 5, "N": 64})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 4 * (2 * c.shape["M"] * c.shape["N"] + c.shape["N"]),
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    reduction_len=lambda c: c.shape["N"],
    initial_kernel="rmsnorm_kernel.py",  # next to this file
)
