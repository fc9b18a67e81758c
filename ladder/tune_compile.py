"""The compile half of a tuning search: every config compiled for the target on the CPU, no GPU; those that cannot
win are dropped before the GPU times the rest.

    results = compile_configs(source, "matmul_kernel", configs, op, workdir)   # one ConfigCompile per config
    kept, pruned = prune(results)

Each config becomes a one-config module (patterns.appliers.tune_search.tune_module) whose `forward` runs in a
child process under irscope's dry-run driver on placeholder inputs of the operator's cheapest case (the JIT
specializes as on the GPU; launches do nothing), with irscope recording the compile: ptxas's registers and spills,
the shared memory Triton allocates, and the layout conversions left in the final TTGIR. The configs are dealt to a
few children side by side, each compiling its share one after another: torch and Triton are imported once per
child, not once per config (the imports cost more than most compiles, and ten searches at once filled an H200
machine's 16 cores, docs/results/engine-h200). Each child has a time limit (ptxas can take minutes on a tile that
spills heavily: such a config would not win either); the config a child was on when it died or ran out of time
fails with that reason, and the configs after it go on in a fresh child.

Pruned: a config that does not compile, spills, needs more shared memory or registers than one SM holds, or
(when more survive than the GPU should time) ranks below the best by the compile's own evidence: spills first,
then layout conversions (a tile shape the compiler can keep in one layout), then the static order.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from irscope import childproc
from irscope.targets import DEFAULT_TARGET
from ladder.ir_capture import case_layout, record_forward
from patterns.appliers.tune_search import tune_module
from suite.operator import Operator

TIMED_MAX = 8  # configs the autotuner times per shape on the GPU
COMPILE_TIMEOUT_S = 240.0  # per child: the config it is on when the limit passes fails
CHILDREN_MAX = 4  # compiling processes per search (one per four cores): each imports torch and Triton once
RESULT_MARK = "tune-compile-result "  # a child's result lines; a forward's own prints are not results
# sm_90: 228 KB shared memory per SM of which 227 KB per block, 64 K registers per SM
MAX_SHARED_BYTES = 232448
REGISTERS_PER_SM = 65536


@dataclass
class ConfigCompile:
    config: dict[str, Any]
    ok: bool
    seconds: float
    registers: int | None = None
    spill_bytes: int = 0
    shared_bytes: int | None = None
    layout_conversions: int | None = None
    error: str | None = None
    pruned: str | None = None  # why the search dropped it: "<reason>: <detail>"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


REPORTED = ("seconds", "registers", "spill_bytes", "shared_bytes", "layout_conversions", "error")  # by a child


def cheapest_case(op: Operator) -> str:
    """Each child builds placeholder inputs on the CPU: those of the case with the fewest bytes (the same
    specialization)."""
    return min(op.cases, key=op.bytes_moved).name


def compile_configs(
    source: str,
    kernel: str,
    configs: list[dict[str, Any]],
    op: Operator,
    workdir: Path,
    target: str = DEFAULT_TARGET,
    jobs: int | None = None,
    timeout_s: float = COMPILE_TIMEOUT_S,
) -> list[ConfigCompile]:
    workdir = workdir.resolve()  # the children run in a directory of their own: a relative path would miss
    workdir.mkdir(parents=True, exist_ok=True)
    case = cheapest_case(op)
    layout = json.dumps(case_layout(op, case))
    modules = []
    for i, cfg in enumerate(configs):
        path = workdir / f"config-{i:02d}.py"
        path.write_text(tune_module(source, kernel, [cfg]))
        modules.append(path)
    jobs = jobs or max(1, min(len(configs), (os.cpu_count() or 2) // 4, CHILDREN_MAX))
    results: dict[int, ConfigCompile] = {}

    def share(indices: list[int]) -> None:
        """A child compiles `indices` in turn; after its death or time limit, a fresh one takes the rest."""
        todo = list(indices)
        while todo:
            with tempfile.TemporaryDirectory(prefix="ladder-tune-") as tmp:
                env = childproc.child_env(
                    Path(tmp), {"TRITON_INTERPRET": "0", "TRITON_CACHE_DIR": str(Path(tmp) / "cache")}
                )
                cmd = [sys.executable, "-m", "ladder.tune_compile", op.ref, case, kernel, target, layout]
                run = childproc.run([*cmd, *(str(modules[i]) for i in todo)], env=env, cwd=tmp, timeout_s=timeout_s)
            for line in run.stdout.splitlines():
                if line.startswith(RESULT_MARK) and todo:
                    found = json.loads(line[len(RESULT_MARK) :])
                    facts = {k: found[k] for k in REPORTED if k in found}
                    i = todo.pop(0)
                    results[i] = ConfigCompile(configs[i], bool(found.get("ok")), **facts)
            if todo:  # the child ended before the config it was on: that config's verdict, the rest go on
                error = (
                    f"compile timed out after {timeout_s:g} s"
                    if run.timed_out
                    else (run.stderr.strip() or f"the compiling process exited {run.returncode}")[-600:]
                )
                i = todo.pop(0)
                results[i] = ConfigCompile(configs[i], False, 0.0, error=error)

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(share, [list(range(len(configs)))[k::jobs] for k in range(jobs)]))
    ordered = [results[i] for i in range(len(configs))]
    (workdir / "compiles.json").write_text(json.dumps([r.to_json() for r in ordered], indent=1))
    return ordered


def prune(results: list[ConfigCompile], timed_max: int = TIMED_MAX) -> tuple[list[ConfigCompile], list[ConfigCompile]]:
    """(kept, pruned) in static order; each pruned result says why."""
    for i, r in enumerate(results):
        threads = 32 * int(r.config.get("num_warps", 4))
        if not r.ok:
            r.pruned = f"does not compile: {r.error}"
        elif i > 0 and r.spill_bytes and any(x.ok and not x.spill_bytes for x in results):  # the base stays
            r.pruned = f"spills: {r.spill_bytes} B where other configs spill nothing"
        elif r.shared_bytes is not None and r.shared_bytes > MAX_SHARED_BYTES:
            r.pruned = f"shared memory: {r.shared_bytes} B, at most {MAX_SHARED_BYTES} per block"
        elif r.registers is not None and r.registers * threads > REGISTERS_PER_SM:
            r.pruned = f"registers: {r.registers} × {threads} threads exceed the SM's {REGISTERS_PER_SM}"
    alive = [r for r in results if r.pruned is None]
    order = {id(r): i for i, r in enumerate(results)}
    # the first config is the base kernel's own: always timed, so the search can only match or beat it
    ranked = sorted(alive, key=lambda r: (order[id(r)] != 0, r.spill_bytes, r.layout_conversions or 0, order[id(r)]))
    for r in ranked[timed_max:]:
        r.pruned = (
            f"ranked out: below the {timed_max} timed (spills {r.spill_bytes} B, "
            f"{r.layout_conversions} layout conversions)"
        )
    kept = [r for r in results if r.pruned is None]
    return kept, [r for r in results if r.pruned is not None]


def _child(op_ref: str, case: str, kernel: str, target: str, layout: str, modules: list[str]) -> None:
    for module in modules:
        started = time.monotonic()
        found = _compile(module, op_ref, case, kernel, target, json.loads(layout))
        print(RESULT_MARK + json.dumps({**found, "seconds": round(time.monotonic() - started, 3)}), flush=True)


def _compile(module: str, op_ref: str, case: str, kernel: str, target: str, layout: list | None) -> dict[str, Any]:
    try:
        rec = record_forward(module, op_ref, case, target, disassemble=False, layout=layout)
    except Exception as e:  # the config's own failure (out of resources, a compile error): a verdict, not a crash
        return {"ok": False, "error": f"{type(e).__name__}: {str(e)[:500]}"}
    traj = next((t for t in rec.trajectories if t.kernel.name == kernel), None)
    if traj is None:
        return {"ok": False, "error": f"forward compiled no kernel named {kernel}"}
    if traj.error is not None:
        return {"ok": False, "error": f"{traj.error.stage}: {traj.error.message[:500]}"}
    res = traj.resources
    try:
        ttgir = traj.stage_output("ttgir").text
        conversions: int | None = ttgir.count("ttg.convert_layout")
    except KeyError:
        conversions = None
    return {
        "ok": True,
        "registers": res.get("registers"),
        "spill_bytes": int(res.get("spill_store_bytes", 0)),
        "shared_bytes": res.get("shared_bytes"),
        "layout_conversions": conversions,
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="child process of ladder.tune_compile.compile_configs")
    for name in ("op_ref", "case", "kernel", "target", "layout"):
        ap.add_argument(name)
    ap.add_argument("modules", nargs="+")
    _child(**vars(ap.parse_args()))
