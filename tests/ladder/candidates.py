"""Candidate modules for new_gelu as a rewriter might return them: correct, wrong, and hostile ones.

The hostile ones pass the reply parser (they import only torch/triton/math) and misbehave when run: they must
be contained by the process that runs candidates, never by the rewriter that merely produces them.
"""

from __future__ import annotations

_KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = 2.0 * tl.sigmoid(2.0 * z) - 1.0
    tl.store(out_ptr + offs, {EXPR}, mask=mask)


def forward(x: torch.Tensor) -> torch.Tensor:
{PRELUDE}    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    gelu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
"""


def module(expr: str = "0.5 * x * (1.0 + t)", prelude: str = "") -> str:
    return _KERNEL.replace("{EXPR}", expr).replace("{PRELUDE}", prelude)


VALID = module()
WRONG = module(expr="0.5 * x")  # drops the tanh term

# Passes the parser, then: reads secrets, spawns a shell, forks, spins, writes outside its directory.
READS_KEY = module(prelude="    raise RuntimeError('key=' + repr(torch.os.environ.get('OPENAI_API_KEY')))\n")
SPAWNS = module(prelude="    triton.runtime.build.subprocess.run(['sh', '-c', 'echo pwned > /tmp/ladder-pwned'])\n")
FORKS = module(prelude="    torch.os.fork()\n")
SPINS = module(prelude="    while True:\n        pass\n")
WRITES_OUTSIDE = module(prelude="    open('/tmp/ladder-outside.txt', 'w').write('x')\n")
HOSTILE = {"reads_key": READS_KEY, "spawns": SPAWNS, "forks": FORKS, "spins": SPINS, "writes_outside": WRITES_OUTSIDE}


def reply(source: str, prose: str = "Blocks of 1024 elements per program.") -> str:
    return f"{prose}\n\n```python\n{source}```\n"
