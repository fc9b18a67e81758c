"""How moe_grouped_topk's correctness rule treats fp32 rounding: an emulated fp32 implementation whose sigmoid is off
by U ulps (a uniform integer in [−U, U] per score, then the oracle's selection) on the operator's cases, random
inputs. Per case and seed: rows whose expert set differs from the oracle's, the exact comparison's verdict
(suite.compare.compare, what failed c3–c5 on the H200) and the operator's rule's (suite.compare.verify).

    python tools/moe_topk_nearties.py [--ulps 4 64] [--seeds 2] [--cases c1 c3] [--device cpu] [--json FILE]

Expected: at 4 ulps (the GPU's sigmoid differs from torch's by a few) the rule accepts every case; at 64 ulps (two
scores then move apart by up to 128 ulps of a score in [0.5, 1), about 4·δ_E) it rejects the flips whose gap is
wider than δ_E and accepts the others.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from suite.compare import compare, verify
from suite.operator import RANDOM, get_operator
from suite.ops.moe_grouped_topk import ROUTED_SCALING_FACTOR, _first_k


def perturbed_routing(
    logits: torch.Tensor, bias: torch.Tensor, G: int, KG: int, K: int, ulps: int, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """The oracle's selection on fp32 sigmoid scores moved by up to `ulps` ulps; weights from those scores."""
    T, E = logits.shape
    sig = torch.sigmoid(logits)
    noise = torch.randint(-ulps, ulps + 1, sig.shape, generator=gen, device=gen.device, dtype=torch.int32)
    sig = (sig.view(torch.int32) + noise).view(torch.float32)
    s = (sig + bias).view(T, G, E // G)
    group_scores = s.sort(dim=-1, descending=True).values[..., :2].sum(-1)
    kept = torch.zeros(T, G, dtype=torch.bool, device=logits.device).scatter_(1, _first_k(group_scores, KG), True)
    idx = _first_k(s.masked_fill(~kept.unsqueeze(-1), float("-inf")).flatten(1), K).sort(dim=-1).values
    w = sig.gather(1, idx)
    return w / w.sum(dim=-1, keepdim=True) * ROUTED_SCALING_FACTOR, idx


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ulps", type=int, nargs="+", default=[4, 64])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--cases", nargs="*", help="case names (default: all five)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    op = get_operator("moe_grouped_topk")
    rows = []
    for ulps in a.ulps:
        for case in [c for c in op.cases if not a.cases or c.name in a.cases]:
            for seed in range(a.seeds):
                inputs = op.make_inputs(case, seed, a.device, RANDOM)
                gen = torch.Generator(device=a.device).manual_seed(1000 + seed)
                logits, bias, G, KG, K = inputs
                out = perturbed_routing(logits, bias, G, KG, K, ulps, gen)
                ref = op.oracle(*inputs)
                t0 = time.perf_counter()
                rule = verify(op, inputs, out)
                seconds = time.perf_counter() - t0
                row = {
                    "ulps": ulps,
                    "case": case.name,
                    "seed": seed,
                    "rows_differing": int((out[1] != ref[1]).any(-1).sum()),
                    "exact_ok": compare(out, ref, op.tolerance).ok,
                    "rule_ok": rule.ok,
                    "rule_detail": rule.detail,
                    "rule_seconds": round(seconds, 3),
                }
                rows.append(row)
                print(
                    f"±{ulps:<3} ulps {case.name} seed {seed}: {row['rows_differing']:>3} rows differ; exact check "
                    f"{'ok' if row['exact_ok'] else 'FAIL'}; rule {'ok' if rule.ok else 'FAIL'} ({seconds:.2f} s)"
                    + ("" if rule.ok else f": {rule.detail[:100]}")
                )
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
