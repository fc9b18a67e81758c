"""Hardware ceilings measured in the same run as the timings, for speed of light
(docs/suite.md#how-speed-of-light-is-computed).

SoL per case = max(bytes / copy bandwidth, FLOPs / bf16 GEMM rate) with bytes = every input read once plus every
output written once. Copy bandwidth counts read + write of a device-to-device copy (`dst.copy_(src)`, 1 GiB);
the GEMM rate is a square bf16 torch.matmul (fp32 accumulation), 8192³ by default. Both are do_bench medians
(L2 flushed). fp32 operators carry no FLOP term (docs/suite.md: fp32 SIMT peak is only a rough guess), so their
SoL is memory-only.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

L2_BYTES = 60 << 20  # the H200's L2 (50 MB on an H100): at most this much can stay cached between calls


@dataclass(frozen=True)
class Ceilings:
    copy_gbps: float  # bytes read + written per second / 1e9
    bf16_tflops: float
    copy_bytes: int
    gemm_n: int

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Ceilings:
        return cls(float(d["copy_gbps"]), float(d["bf16_tflops"]), int(d["copy_bytes"]), int(d["gemm_n"]))

    def sol_ms(self, bytes_moved: int, flops: int, dtype: str) -> float:
        memory = bytes_moved / (self.copy_gbps * 1e9) * 1e3
        compute = flops / (self.bf16_tflops * 1e12) * 1e3 if dtype == "bf16" else 0.0
        return max(memory, compute)

    def floor_ms(self, bytes_moved: int, flops: int, dtype: str, cached: bool = False) -> float:
        """The least time a correct kernel can take: speed of light, except that with the L2 not flushed between
        calls (`cached`: CUDA graph replays) data that fits in the L2 need not come from memory, so only the
        FLOP term bounds it (the L2's own bandwidth is not measured)."""
        if cached and bytes_moved <= L2_BYTES:
            return self.sol_ms(0, flops, dtype)
        return self.sol_ms(bytes_moved, flops, dtype)


def measure(copy_bytes: int = 1 << 30, gemm_n: int = 8192, warmup_ms: float = 25, rep_ms: float = 100) -> Ceilings:
    import torch

    copy_ms = _copy_ms(copy_bytes, warmup_ms, rep_ms)
    gemm_ms = _gemm_ms(gemm_n, warmup_ms, rep_ms)
    torch.cuda.empty_cache()
    return Ceilings(
        copy_gbps=2 * copy_bytes / (copy_ms * 1e-3) / 1e9,
        bf16_tflops=2 * gemm_n**3 / (gemm_ms * 1e-3) / 1e12,
        copy_bytes=copy_bytes,
        gemm_n=gemm_n,
    )


def _copy_ms(copy_bytes: int, warmup_ms: float, rep_ms: float) -> float:
    import torch
    from triton.testing import do_bench

    src = torch.zeros(copy_bytes // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    return statistics.median(do_bench(lambda: dst.copy_(src), warmup=warmup_ms, rep=rep_ms, return_mode="all"))


def _gemm_ms(n: int, warmup_ms: float, rep_ms: float) -> float:
    import torch
    from triton.testing import do_bench

    a = torch.randn((n, n), device="cuda", dtype=torch.bfloat16)
    b = torch.randn((n, n), device="cuda", dtype=torch.bfloat16)
    c = torch.empty((n, n), device="cuda", dtype=torch.bfloat16)
    return statistics.median(
        do_bench(lambda: torch.matmul(a, b, out=c), warmup=warmup_ms, rep=rep_ms, return_mode="all")
    )
