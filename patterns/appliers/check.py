"""Check candidate modules: correct on the operator's small cases under Triton's interpreter, and every launch
compiles for the target with the real compiler. Candidates run in a child process (irscope.childproc) with a
timeout and the allowlisted environment (they are generated code).
"""

from __future__ import annotations

import json
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscope import childproc
from irscope.targets import DEFAULT_TARGET

MIN_GROUP = 16  # candidates per process group before a second group pays off


class CheckError(RuntimeError):
    """The checker itself failed (timeout, crash): no verdict on the candidates."""


@dataclass
class CheckResult:
    id: str
    correct: bool | None  # None: not checked (compile-only)
    compiles: bool
    launches: int = 0
    compiled: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.correct is not False and self.compiles

    def failures(self) -> list[str]:
        out = [f"{r['case']} {r['kind']} config {r['config']}: {r['detail']}" for r in self.runs if not r["ok"]]
        out += [f"compile {c['kernel']}: {c.get('error')}" for c in self.compiled if not c["ok"]]
        if self.error:
            out.append(self.error)
        return out


def _run(mode: str, request: dict, tmp: Path, env: dict[str, str], timeout: float) -> list[dict]:
    req, res = tmp / f"{mode}-request.json", tmp / f"{mode}-result.json"
    req.write_text(json.dumps(request))
    proc = childproc.run(
        [sys.executable, "-m", "patterns.appliers.checkrun", mode, str(req), str(res)],
        env=env,
        cwd=tmp,
        timeout_s=timeout,
    )
    if proc.timed_out:
        raise CheckError(f"{mode} of {len(request['candidates'])} candidate(s) took over {timeout:.0f} s")
    if proc.returncode != 0 or not res.exists():
        raise CheckError(f"the {mode} checker failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(res.read_text())


def _check_group(
    items: list[dict], target: str, env: dict[str, str], timeout: float, tmp: Path, correctness: bool
) -> list[CheckResult]:
    if not correctness:
        recorded = {r["id"]: r for r in _run("record", {"target": target, "candidates": items}, tmp, env, timeout)}
        return [
            CheckResult(
                r["id"],
                None,
                bool(r.get("compiles")),
                len(r.get("launches", [])),
                r.get("compiled", []),
                [],
                r.get("error"),
            )
            for r in (recorded[it["id"]] for it in items)
        ]
    interp = {r["id"]: r for r in _run("interpret", {"candidates": items}, tmp, env, timeout)}
    to_compile = [{**it, "launches": interp[it["id"]].get("launches", [])} for it in items]
    comp = {r["id"]: r for r in _run("compile", {"target": target, "candidates": to_compile}, tmp, env, timeout)}
    out = []
    for it in items:
        i, c = interp[it["id"]], comp[it["id"]]
        error = "\n".join(e for e in (i.get("error"), c.get("error")) if e) or None
        out.append(
            CheckResult(
                it["id"],
                bool(i.get("correct")),
                bool(c.get("compiles")),
                len(i.get("launches", [])),
                c.get("compiled", []),
                i.get("runs", []),
                error,
            )
        )
    return out


def check_many(
    candidates: list[tuple[str, str, str]],
    target: str = DEFAULT_TARGET,
    timeout: float = 900,
    cache_dir: Path | None = None,
    workers: int = 1,
    correctness: bool = True,
) -> dict[str, CheckResult]:
    """`candidates`: (id, operator name, module source). With `correctness`, each runs under the interpreter on
    its operator's small cases and every launch it made is compiled for `target`; without, its launches on the
    first small case are only recorded (not run) and compiled, which is much cheaper. `workers` process groups run
    side by side. Raises CheckError if a checker process dies or times out."""
    ids = [cid for cid, _, _ in candidates]
    if len(set(ids)) != len(ids):
        raise ValueError("candidate ids must be unique")
    with tempfile.TemporaryDirectory(prefix="patterns-check-") as tmpdir:
        tmp = Path(tmpdir)
        # The compile cache outlives the check (a shared default, or the caller's): candidates repeat kernels.
        cache = cache_dir or Path(tempfile.gettempdir()) / "irscope-patterns-triton-cache"
        env = childproc.child_env(tmp, {"OMP_NUM_THREADS": "1", "TRITON_CACHE_DIR": str(cache)})
        items = []
        for n, (cid, op, source) in enumerate(candidates):
            path = tmp / f"cand{n:04d}.py"
            path.write_text(source)
            items.append({"id": cid, "op": op, "path": str(path)})
        # a group pays two interpreter start-ups (torch, triton); small batches go in one group
        n_groups = max(1, min(workers, len(items) // MIN_GROUP))
        groups = [items[w::n_groups] for w in range(n_groups)]
        dirs = [tmp / f"group{g}" for g in range(len(groups))]
        for d in dirs:
            d.mkdir()
        with ThreadPoolExecutor(max_workers=len(groups) or 1) as pool:
            done = list(
                pool.map(lambda gd: _check_group(gd[0], target, env, timeout, gd[1], correctness), zip(groups, dirs))
            )
    return {r.id: r for group in done for r in group}


def check_candidates(
    op: str,
    candidates: list[tuple[str, str]],
    target: str = DEFAULT_TARGET,
    timeout: float = 900,
    cache_dir: Path | None = None,
    correctness: bool = True,
) -> dict[str, CheckResult]:
    """`candidates`: (id, module source) of one operator's kernel; see check_many."""
    return check_many([(cid, op, src) for cid, src in candidates], target, timeout, cache_dir, correctness=correctness)
