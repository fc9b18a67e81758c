"""One run of the benchmark suite: environment and ceilings, then every operator's candidate (default: its frozen
initial kernel) evaluated in its own sandboxed worker, case metrics, the suite's aggregates, one JSON document.

The document is rewritten after every operator, so a run cut short keeps what it measured. Nothing an operator
does (a crash, a hang, a CUDA fault, a wrong result) stops the run: it is recorded and the run goes on. A
deadline stops *starting* operators (they are listed as skipped) so that one command fits a fixed time budget.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from irscope.childproc import REPO_ROOT
from ladder import status
from ladder.confine import available
from ladder.harness.aggregate import CaseSpeed, aggregate
from ladder.harness.ceilings import Ceilings
from ladder.harness.evaluate import evaluate_candidate
from ladder.harness.gpu_lock import exclusive
from ladder.harness.metrics import case_metrics
from ladder.harness.timing import TimingSettings
from ladder.sandbox import run_sandboxed
from suite.operator import all_operators, get_operator

SCHEMA = "irscope.ladder.bench/1"
JSON_NAME, PLOT_NAME = "bench.json", "bench.png"


@dataclass
class SuiteSettings:
    out: Path
    device: str  # cuda | cpu
    ops: list[str] = field(default_factory=list)  # empty: every operator in suite/ops
    cases: list[str] | None = None  # None: c1..c5 on a GPU, the small cases on CPU
    candidate_dir: Path | None = None  # DIR/<op>.py replaces the initial kernel as the candidate where present
    seeds: int = 3
    compile_cases: list[str] = field(default_factory=lambda: ["c3"])  # ["all"] or names; [] for none
    timing: TimingSettings = field(default_factory=TimingSettings)
    deadline_s: float = 480.0
    op_timeout_s: float = 300.0
    silence_s: float = 120.0

    def to_json(self) -> dict:
        d = asdict(self)
        d["out"], d["candidate_dir"] = str(self.out), str(self.candidate_dir) if self.candidate_dir else None
        return d


def run_suite(settings: SuiteSettings, progress: Callable[[str], None] = print) -> dict:
    t0 = time.monotonic()
    settings.out.mkdir(parents=True, exist_ok=True)
    names = settings.ops or list(all_operators())
    for n in names:  # unknown operator or case names fail here, before any device time is spent
        known = {c.name for c in get_operator(n).cases}
        if settings.device == "cuda" and settings.cases and not set(settings.cases) & known:
            raise KeyError(f"{n} has none of the cases {', '.join(settings.cases)}; it has {', '.join(sorted(known))}")
    doc: dict = {
        "schema": SCHEMA,
        "command": _command(),
        "cwd": os.getcwd(),
        "git": _git_head(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "settings": settings.to_json(),
        "operators": [],
        "skipped": [],
    }
    with tempfile.TemporaryDirectory(prefix="ladder-bench-") as shared:
        env_vars = _worker_env(Path(shared))
        lock = str(Path(shared) / "gpu.lock") if settings.device == "cuda" else None
        with exclusive(lock):  # the ceilings are measurements: nothing else may run beside them
            probe = run_sandboxed(
                "ladder.harness.worker:environment",
                {"device": settings.device, "measure_ceilings": settings.device == "cuda"},
                timeout_s=300,
                extra_env=env_vars,
            )
        env: dict[str, Any] = (
            probe.value if probe.ok else {"error": probe.summary(), "stderr": probe.stderr_tail[-3000:]}
        )
        doc["environment"] = env
        ceilings = Ceilings.from_json(env["ceilings"]) if "ceilings" in env else None
        progress(_environment_line(env))
        not_after = time.time() + settings.deadline_s - (time.monotonic() - t0)

        def one(name: str) -> dict:
            if time.time() > not_after:
                return {"op": name, "skipped": f"deadline of {settings.deadline_s:g} s reached"}
            try:
                with status.stage(name):
                    return _run_operator(name, settings, ceilings, env_vars, lock, not_after, progress)
            except Exception as e:  # a harness bug must cost one operator, not the run
                progress(f"{name}: harness error: {type(e).__name__}: {e}")
                return {
                    "op": name,
                    "accepted": False,
                    "cases": [],
                    "harness_error": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-3000:]}",
                }

        # Two workers at a time: their imports, compiles and correctness runs overlap; timings take the GPU alone.
        with ThreadPoolExecutor(max_workers=2) as pool:
            for future in [pool.submit(one, name) for name in names]:
                entry = future.result()
                if entry.get("skipped_cases") and not entry.get("cases"):
                    entry = {"op": entry["op"], "skipped": "the deadline passed while it waited for the GPU"}
                if "skipped" in entry:
                    doc["skipped"].append(entry)
                    progress(f"{entry['op']}: skipped ({entry['skipped']})")
                else:
                    doc["operators"].append(entry)
                doc["seconds"] = round(time.monotonic() - t0, 1)
                write_json(doc, settings.out / JSON_NAME)
    doc["aggregate"] = suite_aggregates(doc["operators"])
    doc["seconds"] = round(time.monotonic() - t0, 1)
    write_json(doc, settings.out / JSON_NAME)
    return doc


def _run_operator(
    name: str,
    settings: SuiteSettings,
    ceilings: Ceilings | None,
    env_vars: dict[str, str],
    lock: str | None,
    not_after: float,
    progress: Callable[[str], None],
) -> dict:
    op = get_operator(name)
    candidate = settings.candidate_dir / f"{name}.py" if settings.candidate_dir else None
    candidate = candidate if candidate is not None and candidate.exists() else None
    gpu = settings.device == "cuda"
    case_names = settings.cases if gpu else None
    if case_names is not None:
        case_names = [c for c in case_names if c in {x.name for x in op.cases}]
    compile_cases = [c.name for c in op.cases] if settings.compile_cases == ["all"] else settings.compile_cases
    result = evaluate_candidate(
        name,
        candidate=candidate,
        cases=case_names,
        device=settings.device,
        seeds=settings.seeds,
        timing=asdict(settings.timing) if gpu else None,
        references=("eager",),
        compile_cases=compile_cases,
        time_initial=candidate is not None,
        gpu_lock=lock,
        not_after=not_after,
        timeout_s=2 * settings.op_timeout_s + 60,
        silence_s=settings.silence_s,
        extra_env=env_vars,
        on_message=lambda m: _progress_line(name, m, progress),
        confinement=available(),  # candidate directories are code like any other: confined where this machine can
        ceilings=ceilings,
    )
    entry = {"op": name, "number": op.number, "dtype": op.dtype, "category": op.category, **result.to_json()}
    for record in entry["cases"]:
        case = next((c for c in [*op.cases, *op.small_cases] if c.name == record["case"]), None)
        try:
            record["metrics"] = case_metrics(record, op, case, ceilings) if case is not None else {}
        except Exception as e:
            record.setdefault("notes", []).append(f"metrics failed: {type(e).__name__}: {e}")
    if not result.accepted:
        progress(f"{name}: NOT accepted: " + "; ".join(r.splitlines()[0] for r in result.reasons()[:3]))
    return entry


def suite_aggregates(operators: list[dict]) -> dict:
    """The aggregates of docs/suite-protocol.md#aggregation for each baseline the run timed: the candidate against
    initial, eager and compile. An operator is correct only if it was accepted on every case (so a failure on c1
    counts against its c3-only compile figure too)."""
    out: dict = {}
    for ref in ("initial", "eager", "compile"):
        speeds = []
        for entry in operators:
            for rec in entry["cases"]:
                if ref not in (rec.get("timing") or {}):
                    continue
                impl = (rec.get("metrics") or {}).get("impl", {})
                speeds.append(
                    CaseSpeed(
                        entry["op"],
                        rec["case"],
                        impl.get(ref, {}).get("ms"),
                        impl.get("candidate", {}).get("ms"),
                        bool(entry.get("accepted")),
                    )
                )
        if speeds:
            out[f"vs_{ref}"] = aggregate(speeds)
    out["accepted_operators"] = sum(1 for e in operators if e.get("accepted"))
    out["operators"] = len(operators)
    return out


def write_json(doc: dict, path: Path) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=str))
    tmp.replace(path)


def _worker_env(shared: Path) -> dict[str, str]:
    """Caches shared by the run's workers (compiled launcher stubs and kernels are reused across operators), and
    one inductor compile thread: no compile-worker pool to start in every operator's fresh process."""
    env = {"TORCHINDUCTOR_COMPILE_THREADS": "1", "TORCHINDUCTOR_CACHE_DIR": str(shared / "inductor")}
    env["TRITON_CACHE_DIR"] = os.environ.get("TRITON_CACHE_DIR") or str(shared / "triton")
    return env


def _command() -> str:
    import shlex

    return shlex.join(getattr(sys, "orig_argv", sys.argv))


def _git_head() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip() or None if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _environment_line(env: dict) -> str:
    if "error" in env:
        return f"environment probe failed: {env['error']}"
    parts = [f"torch {env.get('torch')}", f"triton {env.get('triton')}", env.get("gpu") or "no GPU"]
    c = env.get("ceilings")
    if c:
        parts.append(f"copy {c['copy_gbps']:.0f} GB/s, bf16 GEMM {c['bf16_tflops']:.0f} TFLOP/s")
    return " | ".join(parts)


def _progress_line(op: str, msg: dict, progress: Callable[[str], None]) -> None:
    """One line per timed case, as the runner answers (the verdict comes with the operator's line)."""
    if msg.get("type") != "done" or msg.get("cmd") != "time":
        return
    timing = msg.get("timing") or {}
    times = " ".join(f"{k}={v['ms']:.4g}ms" for k, v in timing.items() if isinstance(v, dict) and v.get("ms"))
    progress(f"{op} {msg.get('case')}: {times} ({msg.get('seconds', 0):.1f}s)")
