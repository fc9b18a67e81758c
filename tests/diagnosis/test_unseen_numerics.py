"""The unseen and fresh sets' kernels, and their fixes, compute what they claim: Triton's interpreter on tiny fp32
inputs against a plain PyTorch reference (the compiled dtypes of the yaml files are not what is checked, the math is).

A kernel with a performance bug is still a correct kernel: these tests keep it one, and keep each fix equivalent.
The interpreter has to be on before triton is imported (triton.language's own helpers are @jit functions), so the
checks run in one child process (`TRITON_INTERPRET=1 python -m tests.diagnosis.test_unseen_numerics`, which prints
each check's outcome) and each test reads its outcome.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

KERNELS = Path(__file__).parent / "kernels" / "unseen"
FRESH = Path(__file__).parent / "kernels" / "fresh"  # fresh.yaml's kernels: their checks are named fresh/…
ROOT = Path(__file__).resolve().parents[2]
CHECKS: dict[str, tuple[Callable[..., None], Any]] = {}

if os.environ.get("TRITON_INTERPRET") == "1":  # the child process
    import torch
    import triton


def check(name: str, variants: dict[str, Any] | None = None):
    """Register a check; with variants, one check per variant (its value is the argument)."""

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        for label, arg in (variants or {"": None}).items():
            CHECKS[f"{name}-{label}" if label else name] = (fn, arg)
        return fn

    return register


def both(file: str) -> dict[str, str]:
    """The kernel as written and its fix file."""
    return {"written": file, "fixed": f"fixes/{file}"}


def interpreted(rel: str, name: str, root: Path = KERNELS):
    """The @triton.jit function `name` of kernels/unseen/REL (under the interpreter, in the child)."""
    spec = importlib.util.spec_from_file_location(f"interp_{root.name}_" + re.sub(r"\W", "_", rel), root / rel)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def fresh(rel: str, name: str):
    """The same for kernels/fresh/REL."""
    return interpreted(rel, name, FRESH)


def close(got, want, tol):
    assert (got.float() - want.float()).abs().max().item() <= tol


@check("token_bincount", both("token_bincount.py"))
def token_bincount(file):
    ids = torch.randint(-1, 8, (3000,), dtype=torch.int32)
    want = torch.bincount(ids[ids >= 0].long(), minlength=8).int()
    counts = torch.zeros(8, dtype=torch.int32)
    interpreted(file, "token_bincount_kernel")[(3,)](ids, counts, 3000, NUM_EXPERTS=8, BLOCK=1024)
    assert torch.equal(counts, want)


@check("topk_mask_logits", both("topk_mask_logits.py"))
def topk_mask_logits(file):
    x = torch.randn(3, 1000)
    kth = x.topk(10, dim=1).values[:, -1].contiguous()
    y = x.clone()
    interpreted(file, "topk_mask_logits_kernel")[(3,)](y, kth, 1000, 1000, BLOCK=256)
    assert torch.equal(y, torch.where(x < kth[:, None], float("-inf"), x))


@check("conv_bias_act", both("conv_bias_act.py"))
def conv_bias_act(file):
    n, c, h, w = 2, 6, 7, 7
    conv, res, scale, shift = torch.randn(n, c, h, w), torch.randn(n, c, h, w), torch.randn(c), torch.randn(c)
    pre = conv * scale[None, :, None, None] + shift[None, :, None, None]
    out = torch.empty_like(conv)
    kernel = interpreted(file, "conv_bias_act_kernel")
    kernel[(triton.cdiv(conv.numel(), 128),)](conv, res, scale, shift, out, conv.numel(), c, h * w, BLOCK=128)
    close(out, pre * torch.sigmoid(pre) + res, 1e-5)


@check("rope_interleaved", both("rope_interleaved.py"))
def rope_interleaved(file):
    t, h, d = 3, 5, 16
    x, pos = torch.randn(t, h, d), torch.tensor([0, 3, 7])
    angle = torch.arange(16)[:, None].float() / (10000 ** (torch.arange(0, d, 2).float() / d))[None, :]
    cos, sin = angle.cos(), angle.sin()
    c, s = cos[pos][:, None, :], sin[pos][:, None, :]
    even, odd = x[..., 0::2], x[..., 1::2]
    want = torch.stack([even * c - odd * s, even * s + odd * c], dim=-1).reshape(t, h, d)
    y = x.clone()
    interpreted(file, "rope_interleaved_kernel")[(t, 2)](y, cos, sin, pos, h, h * d, d, HEAD_DIM=d, BLOCK_H=4)
    close(y, want, 1e-5)


@check("paged_decode_attention", both("paged_decode_attention.py"))
def paged_decode_attention(file):
    b, h, hk, d, page = 2, 4, 2, 16, 4
    q, k_cache, v_cache = torch.randn(b, h, d), torch.randn(10, page, hk, d), torch.randn(10, page, hk, d)
    seq_lens = torch.tensor([7, 13], dtype=torch.int32)
    tables = torch.tensor([[3, 1, 0, 0], [2, 9, 5, 7]], dtype=torch.int32)
    want = torch.empty(b, h, d)
    for i in range(b):
        n = int(seq_lens[i])
        pages = tables[i, : (n + page - 1) // page]
        keys, values = k_cache[pages].reshape(-1, hk, d)[:n], v_cache[pages].reshape(-1, hk, d)[:n]
        for j in range(h):
            scores = keys[:, j // (h // hk)] @ q[i, j] * d**-0.5
            want[i, j] = torch.softmax(scores, 0) @ values[:, j // (h // hk)]
    out = torch.empty(b, h, d)
    kernel = interpreted(file, "paged_decode_attention_kernel")
    strides = (h * d, d, page * hk * d, hk * d, d, 4, h * d, d)
    kernel[(b, h)](q, k_cache, v_cache, tables, seq_lens, out, d**-0.5, *strides, KV_GROUP=2, PAGE=page, HEAD_DIM=d,
                   BLOCK_N=8)  # fmt: skip
    close(out, want, 1e-4)


@check("moe_grouped_gemm", both("moe_grouped_gemm.py"))
def moe_grouped_gemm(file):
    n_out, k, block_m = 32, 48, 16
    rows = [5, 0, 20]
    ends = torch.tensor(rows).cumsum(0).int()
    x, w = torch.randn(int(ends[-1]), k), torch.randn(3, n_out, k)
    tile_expert, tile_row, start = [], [], 0
    for e, r in enumerate(rows):
        tile_expert += [e] * len(range(0, r, block_m))
        tile_row += [start + t for t in range(0, r, block_m)]
        start += r
    want = torch.cat([x[int(ends[e]) - rows[e] : int(ends[e])] @ w[e].T for e in range(3)])
    y = torch.zeros_like(want)
    kernel = interpreted(file, "moe_grouped_gemm_kernel")
    tiles = (torch.tensor(tile_expert, dtype=torch.int32), torch.tensor(tile_row, dtype=torch.int32), ends)
    kernel[(len(tile_expert), 2)](x, w, y, *tiles, n_out, k, k, n_out * k, k, n_out, BLOCK_M=block_m, BLOCK_N=16,
                                  BLOCK_K=16)  # fmt: skip
    close(y, want, 1e-3)


@check("fp8_gemm_rowwise", both("fp8_gemm_rowwise.py"))
def fp8_gemm_rowwise(file):
    m, n, k = 32, 32, 64
    a, b, sa, sb = torch.randn(m, k), torch.randn(n, k), torch.rand(m) + 0.5, torch.rand(n) + 0.5
    c = torch.empty(m, n)
    kernel = interpreted(file, "fp8_gemm_rowwise_kernel")
    kernel[(4,)](a, b, c, sa, sb, m, n, k, k, k, n, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
    close(c, (a * sa[:, None]) @ (b * sb[:, None]).T, 1e-3)


@check("fp8_linear", {"written": "(K, N)", "fixed": "(N, K)"})
def fp8_linear(layout):
    m, n, k = 20, 32, 48
    x, w, bias = torch.randn(m, k), torch.randn(k, n), torch.randn(n)
    weight, stride_wk, stride_wn = (w.contiguous(), n, 1) if layout == "(K, N)" else (w.T.contiguous(), 1, k)
    y = torch.empty(m, n)
    kernel = interpreted("fp8_linear.py", "fp8_linear_kernel")
    scales = (torch.tensor([0.5]), torch.tensor([3.0]))
    kernel[(2, 2)](x, weight, bias, y, *scales, m, n, k, k, stride_wk, stride_wn, n, BLOCK_M=16, BLOCK_N=16,
                   BLOCK_K=16)  # fmt: skip
    close(y, (x @ w) * 1.5 + bias, 1e-3)


@check("w4a16_gemm")
def w4a16_gemm():
    m, n, k, group = 16, 32, 64, 32
    q, scales = torch.randint(-8, 8, (k, n)), torch.rand(k // group, n) + 0.1
    packed = ((q[0::2] + 8) | ((q[1::2] + 8) << 4)).to(torch.uint8)
    x = torch.randn(m, k)
    y = torch.empty(m, n)
    kernel = interpreted("w4a16_gemm.py", "w4a16_gemm_kernel")
    kernel[(1, 2)](x, packed, scales, y, m, n, k, k, n, n, n, GROUP=group, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    close(y, x @ (q.float() * scales.repeat_interleave(group, 0)), 1e-3)


@check("flash_attn_fwd")
def flash_attn_fwd():
    bh, n, d = 2, 64, 16
    q, k, v = torch.randn(bh, n, d), torch.randn(bh, n, d), torch.randn(bh, n, d)
    scores = q @ k.transpose(1, 2) * d**-0.5
    o, lse = torch.empty_like(q), torch.empty(bh, n)
    kernel = interpreted("flash_attn_fwd.py", "flash_attn_fwd_kernel")
    kernel[(n // 16, bh)](q, k, v, o, lse, d**-0.5, n, HEAD_DIM=d, BLOCK_M=16, BLOCK_N=16)
    close(o, torch.softmax(scores, -1) @ v, 1e-4)
    close(lse, torch.logsumexp(scores, -1) / math.log(2), 1e-4)


@check("top_p_filter")
def top_p_filter():
    x, top_p = torch.randn(2, 2048) * 3, torch.tensor([0.5, 0.9])
    values, _ = x.sort(dim=1, descending=True)
    p = torch.softmax(values, 1)
    keep = (p.cumsum(1) - p) < top_p[:, None]
    out, index = torch.empty(2, 2048), torch.empty(2, 2048, dtype=torch.int32)
    interpreted("top_p_filter.py", "top_p_filter_kernel")[(2,)](x, top_p, out, index, 2048, 2048, BLOCK=2048)
    assert torch.equal(out, torch.where(keep, values, float("-inf")))
    assert torch.equal(x.gather(1, index.long()), values)


@check("qk_rmsnorm")
def qk_rmsnorm():
    x, w = torch.randn(6, 128), torch.randn(128)
    y = torch.empty_like(x)
    interpreted("qk_rmsnorm.py", "qk_rmsnorm_kernel")[(6,)](x, w, y, 128, 1e-6, HEAD_DIM=128)
    close(y, x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w, 1e-4)


@check("linear_gelu")
def linear_gelu():
    m, n, k = 20, 24, 40
    x, w, b = torch.randn(m, k), torch.randn(n, k), torch.randn(n)
    y = torch.empty(m, n)
    kernel = interpreted("linear_gelu.py", "linear_gelu_kernel")
    kernel[(4,)](x, w, b, y, m, n, k, k, k, n, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
    close(y, torch.nn.functional.gelu(x @ w.T + b), 1e-4)


@check("adamw_step")
def adamw_step():
    n = 1000
    p, g, m, v = torch.randn(n), torch.randn(n), torch.randn(n) * 0.1, torch.rand(n) * 0.1
    ref = p.clone().requires_grad_()
    opt = torch.optim.AdamW([ref], lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    ref.grad = g.clone()
    opt.state[ref] = {"step": torch.tensor(2.0), "exp_avg": m.clone(), "exp_avg_sq": v.clone()}
    opt.step()
    kernel = interpreted("adamw_step.py", "adamw_step_kernel")
    kernel[(4,)](p, g, m, v, n, 1e-3, 0.9, 0.95, 1e-8, 0.1, 1 - 0.9**3, 1 - 0.95**3, BLOCK=256)
    close(p, ref.detach(), 1e-6)


@check("kv_cache_append")
def kv_cache_append():
    t, hk, d, page = 5, 2, 16, 4
    key, value, slots = torch.randn(t, hk, d), torch.randn(t, hk, d), torch.tensor([3, 9, -1, 0, 22])
    k_cache, v_cache = torch.zeros(6, page, hk, d), torch.zeros(6, page, hk, d)
    want_k, want_v = k_cache.clone().view(-1, hk, d), v_cache.clone().view(-1, hk, d)
    for i, s in enumerate(slots.tolist()):
        if s >= 0:
            want_k[s], want_v[s] = key[i], value[i]
    kernel = interpreted("kv_cache_append.py", "kv_cache_append_kernel")
    kernel[(t,)](key, value, k_cache, v_cache, slots, hk * d, hk * d, page * hk * d, hk * d, PAGE=page, ROW=hk * d)
    assert torch.equal(k_cache.view(-1, hk, d), want_k) and torch.equal(v_cache.view(-1, hk, d), want_v)


@check("silu_and_mul")
def silu_and_mul():
    x = torch.randn(3, 600)
    y = torch.empty(3, 300)
    interpreted("silu_and_mul.py", "silu_and_mul_kernel")[(3, 3)](x, y, 300, 600, 300, BLOCK=128)
    close(y, torch.nn.functional.silu(x[:, :300]) * x[:, 300:], 1e-5)


@check("fresh/fused_add_layernorm")
def fused_add_layernorm():
    t, n = 5, 300
    x, r, w, b = torch.randn(t, n), torch.randn(t, n), torch.randn(n), torch.randn(n)
    h = x + r
    want = torch.nn.functional.layer_norm(h, (n,), w, b, 1e-5)
    res, y = r.clone(), torch.empty(t, n)
    fresh("fused_add_layernorm.py", "fused_add_layernorm_kernel")[(t,)](x, res, w, b, y, n, n, 1e-5, BLOCK_N=512)
    close(res, h, 1e-6)
    close(y, want, 1e-4)


@check("fresh/moe_combine", both("moe_combine.py"))
def moe_combine(f):
    t, topk, d = 13, 4, 40
    y = torch.randn(t * topk, d)
    wts = torch.rand(t, topk)
    row_idx = torch.randperm(t * topk).int().reshape(t, topk)
    want = (y[row_idx.long()] * wts[..., None]).sum(1)
    out = torch.zeros(t, d)
    bm, bd = 8, 16
    fresh(f, "moe_combine_kernel")[(triton.cdiv(t * topk, bm), triton.cdiv(d, bd))](
        y, wts, row_idx, out, t, d, d, d, TOPK=topk, BLOCK_M=bm, BLOCK_D=bd
    )
    close(out, want, 1e-5)


@check("fresh/decode_softmax", both("decode_softmax.py"))
def decode_softmax(f):
    rows, max_len, kv_len = 3, 64, 37
    s = torch.randn(rows, max_len)
    want = torch.zeros(rows, max_len)
    want[:, :kv_len] = torch.softmax(s[:, :kv_len] * 0.5, -1)
    p = torch.zeros(rows, max_len)
    fresh(f, "decode_softmax_kernel")[(rows,)](s, p, kv_len, max_len, max_len, 0.5, BLOCK=64)
    close(p, want, 1e-6)


@check("fresh/shampoo_stat", both("shampoo_stat.py"))
def shampoo_stat(f):
    m, k = 32, 48
    g, stat = torch.randn(m, k), torch.randn(m, m)
    want = 0.9 * stat + 0.1 * (g @ g.T)
    s = stat.clone()
    fresh(f, "shampoo_stat_kernel")[(2, 2)](g, s, k, k, m, 0.9, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    close(s, want, 1e-3)


@check("fresh/lora_shrink")
def lora_shrink():
    k, rank, nl = 48, 16, 3
    seg = [5, 0, 19, 7]
    lor = [2, 0, -1, 1]
    starts = torch.tensor([0, *torch.tensor(seg).cumsum(0).tolist()]).int()
    t = int(starts[-1])
    x = torch.randn(t, k)
    a = torch.randn(nl, rank, k)
    want = torch.zeros(t, rank)
    for i in range(len(seg)):
        s0, s1 = int(starts[i]), int(starts[i + 1])
        if lor[i] >= 0:
            want[s0:s1] = 0.5 * x[s0:s1] @ a[lor[i]].T
    v = torch.zeros(t, rank)
    fresh("lora_shrink.py", "lora_shrink_kernel")[(triton.cdiv(max(seg), 16), len(seg))](
        x, a, v, starts, torch.tensor(lor).int(), k, k, rank * k, k, rank, 0.5, RANK=rank, BLOCK_M=16, BLOCK_K=16
    )
    close(v, want, 1e-4)


@check("fresh/sliding_window_attention", both("sliding_window_attention.py"))
def sliding_window_attention(f):
    bh, n, d, win = 2, 80, 16, 24
    q, k, v = torch.randn(bh, n, d), torch.randn(bh, n, d), torch.randn(bh, n, d)
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    keep = (j <= i) & (j > i - win)
    sc = (q @ k.transpose(1, 2)) * d**-0.5
    want = torch.softmax(sc.masked_fill(~keep, float("-inf")), -1) @ v
    o = torch.empty_like(q)
    fresh(f, "sliding_window_attention_kernel")[(triton.cdiv(n, 16), bh)](
        q, k, v, o, d**-0.5, n, WINDOW=win, HEAD_DIM=d, BLOCK_M=16, BLOCK_N=16
    )
    close(o, want, 1e-4)


@check("fresh/infonce_accuracy", both("infonce_accuracy.py"))
def infonce_accuracy(f):
    b = 50
    s = torch.randn(b, b)
    s[torch.arange(0, b, 2), torch.arange(0, b, 2)] += 3.0
    want_loss = torch.nn.functional.cross_entropy(s * 2.0, torch.arange(b), reduction="none")
    want_cor = (s.argmax(1) == torch.arange(b)).int()
    loss, cor = torch.empty(b), torch.empty(b, dtype=torch.int32)
    fresh(f, "infonce_accuracy_kernel")[(b,)](s, loss, cor, b, b, 2.0, BLOCK=64)
    close(loss, want_loss, 1e-4)
    assert torch.equal(cor, want_cor)


@check("fresh/se_scale_residual", both("se_scale_residual.py"))
def se_scale_residual(f):
    n, c, hw = 2, 6, 49
    x, r, g = torch.randn(n, c, 7, 7), torch.randn(n, c, 7, 7), torch.rand(n * c)
    want = torch.relu(x * g.reshape(n, c, 1, 1) + r)
    out = torch.empty_like(x)
    fresh(f, "se_scale_residual_kernel")[(triton.cdiv(x.numel(), 128),)](x, g, r, out, x.numel(), hw, BLOCK=128)
    close(out, want, 1e-6)


@check("fresh/lion_step")
def lion_step():
    n = 1000
    p, g, m = torch.randn(n), torch.randn(n), torch.randn(n) * 0.1
    lr, b1, b2, wd = 1e-3, 0.9, 0.99, 0.1
    want_p = p * (1 - lr * wd) - lr * torch.sign(b1 * m + (1 - b1) * g)
    want_m = b2 * m + (1 - b2) * g
    fresh("lion_step.py", "lion_step_kernel")[(4,)](p, g, m, n, lr, b1, b2, wd, BLOCK=256)
    close(p, want_p, 1e-6)
    close(m, want_m, 1e-6)


@check("fresh/rope_neox")
def rope_neox():
    t, h, d = 3, 5, 16
    x, pos = torch.randn(t, h, d), torch.tensor([0, 4, 9])
    ang = torch.arange(16)[:, None].float() / (10000 ** (torch.arange(0, d, 2).float() / d))[None, :]
    cos, sin = ang.cos(), ang.sin()
    c, s = cos[pos][:, None, :], sin[pos][:, None, :]
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    want = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)
    y = x.clone()
    fresh("rope_neox.py", "rope_neox_kernel")[(t, 2)](y, cos, sin, pos, h, h * d, d, HEAD_DIM=d, BLOCK_H=4)
    close(y, want, 1e-5)


def run_all() -> dict[str, str]:
    outcomes = {}
    for name, (fn, arg) in CHECKS.items():
        torch.manual_seed(0)
        try:
            fn() if arg is None else fn(arg)
            outcomes[name] = "ok"
        except Exception:
            outcomes[name] = traceback.format_exc(limit=3)
    return outcomes


@pytest.fixture(scope="module")
def outcomes() -> dict[str, str]:
    pytest.importorskip("torch")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "tests.diagnosis.test_unseen_numerics"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHECKS))
def test_kernel_computes_its_reference(name: str, outcomes: dict[str, str]):
    assert outcomes[name] == "ok", outcomes[name]


if __name__ == "__main__":
    assert os.environ.get("TRITON_INTERPRET") == "1", "run with TRITON_INTERPRET=1"
    print(json.dumps(run_all()))
