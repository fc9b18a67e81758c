"""The GPU smoke run: the check every change to ladder/, suite/ or the sandbox must pass on a GPU machine, since CI
has none (README, Development). In about three minutes on one H200:

1. `ladder suite --offline` on three operators (new_gelu, softmax, matmul_transposed_b), one round each, three jobs
   at once on the one GPU, no baseline cache: the whole engine (baselines, diagnosis, rewrite, sandboxed
   validation, timing under the GPU lock) as a run uses it;
2. the hostile timing candidates of tests/gpu/hostile through the harness, three at a time, each with the layers
   a round uses (the static check where the candidate would pass it, else the runtime layers behind it);

then one table: rounds completed, seconds per round, each verdict, and how busy the GPU was.

    python -m tools.gpu_smoke --out out/smoke [--index out/compiler-index.db]

Exit status 0 only when the suite run finished, every round was recorded, and every hostile candidate got the
verdict it must (the control accepted, the cheats rejected or timed honestly).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from irscope.childproc import REPO_ROOT
from ladder import confine, gpu_busy
from ladder.harness.ceilings import measure
from ladder.harness.evaluate import CandidateResult, evaluate_candidate
from ladder.harness.gpu_lock import exclusive
from ladder.harness.timing import TimingSettings
from ladder.records import History

OPS = ("new_gelu", "softmax", "matmul_transposed_b")
HOSTILE = REPO_ROOT / "tests" / "gpu" / "hostile"
# candidate → (run with the static check, what must happen): "accepted", "rejected", or "honest" (accepted, and no
# faster than the control: its cheat never served a timed call)
EXPECTED = {
    "honest": (True, "accepted"),
    "checks_only": (True, "rejected"),
    "caches_by_version": (False, "honest"),
    "thread_at_import": (False, "rejected"),
    "patches_monitor": (False, "rejected"),
}


def _suite(out: Path, index: Path | None) -> tuple[int, float, str]:
    cmd = [sys.executable, "-m", "ladder.cli", "suite", "--offline", "--ops", ",".join(OPS), "--rounds", "1"]
    cmd += ["--jobs", "3", "--ncu", "none", "--no-torch-compile", "--baseline-cache", "none", "--quiet"]
    cmd += ["--out", str(out), *(["--index", str(index)] if index else [])]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return proc.returncode, time.monotonic() - t0, (proc.stdout + proc.stderr)[-3000:]


def _hostile(name: str, lock: str, ceilings) -> tuple[str, CandidateResult]:
    static, _ = EXPECTED[name]
    result = evaluate_candidate(
        "new_gelu",
        candidate=HOSTILE / f"{name}.py",
        cases=["c1", "c2"],
        device="cuda",
        seeds=2,
        timing=TimingSettings(rounds=2, rep_ms=10).__dict__,
        references=(),
        gpu_lock=lock,
        confinement=confine.available(),
        ceilings=ceilings,
        timeout_s=300,
        static=static,
    )
    return name, result


def _c1_ms(r: CandidateResult) -> float | None:
    case = next((c for c in r.cases if c["case"] == "c1"), {})
    return ((case.get("timing") or {}).get("candidate") or {}).get("ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--index", type=Path, help="compiler index for L4 (optional)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    code, suite_s, tail = _suite(args.out / "suite", args.index)
    with History(args.out / "suite") as h:
        rounds = [r for r in h.rounds() if r.round > 0]
        baselines = [r for r in h.rounds() if r.round == 0]
    lines = [f"suite: exit {code}, {suite_s:.0f} s, {len(baselines)} baselines, {len(rounds)} rounds"]
    for rd in [*baselines, *rounds]:
        seconds = sum(v for k, v in rd.seconds.items() if not k.startswith("harness."))
        gain = f" {rd.speedup:.3g}x" if rd.speedup else ""
        lines.append(f"  {rd.op} round {rd.round}: {rd.decision}{gain} ({seconds:.1f} s) {rd.reason[:100]}")
    busy = gpu_busy.summary(args.out / "suite")
    if busy:
        lines.append(f"  GPU busy in {busy.busy_share:.0%} of {busy.samples} samples, mean {busy.mean_util:.0f} %")
    with tempfile.TemporaryDirectory() as tmp:
        lock = str(Path(tmp) / "gpu.lock")
        with exclusive(lock):
            ceilings = measure(copy_bytes=256 << 20, gemm_n=4096, warmup_ms=5, rep_ms=20)
        t1 = time.monotonic()
        with ThreadPoolExecutor(3) as pool:
            results = dict(pool.map(lambda n: _hostile(n, lock, ceilings), EXPECTED))
    ok = code == 0 and len(rounds) == len(OPS) and len(baselines) == len(OPS)
    control = _c1_ms(results["honest"])
    lines.append(f"hostile candidates ({time.monotonic() - t1:.0f} s):")
    for name, r in results.items():
        must = EXPECTED[name][1]
        ms = _c1_ms(r)
        if must == "honest":
            good = r.accepted and ms is not None and control is not None and ms > 0.8 * control
        else:
            good = r.accepted == (must == "accepted")
        ok &= good
        verdict = "accepted" if r.accepted else "rejected: " + "; ".join(x[:90] for x in r.reasons()[:2])
        timed = f" c1 {ms:.4g} ms" if ms else ""
        lines.append(f"  {'ok ' if good else 'BAD'} {name} (must be {must}): {verdict}{timed}")
    lines.append(f"smoke: {'passed' if ok else 'FAILED'} in {time.monotonic() - t0:.0f} s")
    print("\n".join(lines))
    doc = {"lines": lines, "ok": ok, "suite_tail": tail, "hostile": {k: v.to_json() for k, v in results.items()}}
    (args.out / "smoke.json").write_text(json.dumps(doc, indent=1, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
