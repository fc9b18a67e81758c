"""Check candidate modules: correct on the operator's small cases under Triton's interpreter, and every launch
compiles for the target with the real compiler. Candidates run in a subprocess with a timeout and a clean
environment (they are generated code).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


class CheckError(RuntimeError):
    """The checker itself failed (timeout, crash): no verdict on the candidates."""


@dataclass
class CheckResult:
    id: str
    correct: bool
    compiles: bool
    launches: int = 0
    compiled: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.correct and self.compiles

    def failures(self) -> list[str]:
        out = [f"{r['case']} {r['kind']} config {r['config']}: {r['detail']}" for r in self.runs if not r["ok"]]
        out += [f"compile {c['kernel']}: {c.get('error')}" for c in self.compiled if not c["ok"]]
        if self.error:
            out.append(self.error)
        return out


def clean_env(cache_dir: Path | None) -> dict[str, str]:
    """Only what Python and Triton need; the caller's credentials and settings stay out."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO_ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "HOME": tempfile.gettempdir(),
    }
    env["TRITON_CACHE_DIR"] = str(cache_dir or Path(tempfile.gettempdir()) / "irscope-patterns-triton-cache")
    return env


def _run(mode: str, request: dict, tmp: Path, env: dict[str, str], timeout: float) -> list[dict]:
    req, res = tmp / f"{mode}-request.json", tmp / f"{mode}-result.json"
    req.write_text(json.dumps(request))
    try:
        proc = subprocess.run([sys.executable, "-m", "patterns.appliers.checkrun", mode, str(req), str(res)],
                              env=env, cwd=tmp, capture_output=True, text=True, timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired as e:
        raise CheckError(f"{mode} of {len(request['candidates'])} candidate(s) of {request['op']} took over "
                         f"{timeout:.0f} s") from e
    if proc.returncode != 0 or not res.exists():
        raise CheckError(f"the {mode} checker failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(res.read_text())


def check_candidates(op: str, candidates: list[tuple[str, str]], target: str = "cuda:90", timeout: float = 600,
                     cache_dir: Path | None = None) -> dict[str, CheckResult]:
    """`candidates`: (id, module source). Each runs under the interpreter on the operator's small cases and every
    launch it made is compiled for `target`. Raises CheckError if a checker process dies or times out."""
    env = clean_env(cache_dir)
    with tempfile.TemporaryDirectory(prefix="patterns-check-") as tmpdir:
        tmp = Path(tmpdir)
        items = []
        for cid, source in candidates:
            path = tmp / f"cand{len(items):03d}.py"
            path.write_text(source)
            items.append({"id": cid, "path": str(path)})
        interp = _run("interpret", {"op": op, "candidates": items}, tmp, env, timeout)
        by_id = {r["id"]: r for r in interp}
        to_compile = [{**it, "launches": by_id[it["id"]].get("launches", [])} for it in items]
        comp = {r["id"]: r for r in _run("compile", {"op": op, "target": target, "candidates": to_compile}, tmp,
                                         env, timeout)}  # fmt: skip
    out = {}
    for cid, _ in candidates:
        i, c = by_id[cid], comp[cid]
        error = "\n".join(e for e in (i.get("error"), c.get("error")) if e) or None
        out[cid] = CheckResult(cid, bool(i.get("correct")), bool(c.get("compiles")), len(i.get("launches", [])),
                               c.get("compiled", []), i.get("runs", []), error)
    return out
