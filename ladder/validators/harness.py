"""The harness as a round's validator: the candidate runs in the sandboxed worker (ladder/harness), is checked
against the oracle on fresh and adversarial inputs with the anti-cheat monitor, and — on a GPU — is timed
against eager on every suite case, with speed of light from ceilings measured once in this process.

On a machine with several GPUs, or with several rounds in flight on one, a validator is bound to a GpuSlot: its
workers see only that GPU and take its GpuLock alone to time (ladder/harness/gpu_lock.py). One validator may
serve several threads; it measures its ceilings once.

On a machine without CUDA it validates the small cases under TRITON_INTERPRET=1 and keeps no times.

The candidate runs confined (`confinement`, ladder.confine) and its verdict is decided in this process
(ladder.harness.evaluate); only with `confinement=None`, the user's --unsafe-no-sandbox, does it run as a plain
child process.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, replace
from pathlib import Path

from ladder.confine import Confinement
from ladder.harness.baselines import BaselineCache, BaselineKey
from ladder.harness.ceilings import Ceilings
from ladder.harness.evaluate import evaluate_candidate
from ladder.harness.gpu_lock import GpuSlot, exclusive
from ladder.harness.metrics import case_metrics
from ladder.harness.spares import Spares
from ladder.harness.timing import TimingSettings
from ladder.sandbox import run_sandboxed
from ladder.validation import CaseResult, Validation
from suite.operator import Operator


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


class HarnessValidator:
    name = "harness"

    def __init__(
        self,
        seeds: int = 3,
        timing: TimingSettings | None = None,
        timeout_s: float = 900,
        slot: GpuSlot | None = None,
        confinement: Confinement | None = None,
        baselines: BaselineCache | None = None,
        start_ahead: bool | None = None,
    ):
        self.seeds, self.timing, self.timeout_s, self.slot = seeds, timing or TimingSettings(), timeout_s, slot
        self.confinement = confinement
        self.baselines = baselines or BaselineCache(None)
        self.device = "cuda" if _cuda() else "cpu"
        self._ceilings: Ceilings | None = None
        self._environment_doc: dict = {}
        self._gpu_name = "cpu (TRITON_INTERPRET=1)"
        self._probing = threading.Lock()
        # operator → case → (eager ms, torch.compile ms), from its baseline: a candidate's round times it alone
        self._references: dict[str, dict[str, tuple[float | None, float | None]]] = {}
        # start_ahead: a candidate round's runner starts when the round before it is evaluated. None: on a GPU, where
        # the start is on the round's critical path; a CPU run's starts cost less than the processes spares add
        self._spares = Spares() if (self.device == "cuda" if start_ahead is None else start_ahead) else None

    def close(self) -> None:
        """End the runners started ahead for rounds that will not come."""
        if self._spares is not None:
            self._spares.close()

    @property
    def _lock(self) -> str | None:
        return self.slot.lock if self.slot else None

    @property
    def _env(self) -> dict[str, str]:
        return self.slot.env() if self.slot else {}

    def _environment(self) -> None:
        with self._probing:
            if self.device != "cuda" or self._ceilings is not None:
                return
            with exclusive(self._lock):  # the ceilings are measurements: nothing else may run beside them
                probe = run_sandboxed(
                    "ladder.harness.worker:environment",
                    {"device": "cuda", "measure_ceilings": True},
                    timeout_s=300,
                    extra_env=self._env,
                )
            if probe.ok and "ceilings" in probe.value:
                self._environment_doc = dict(probe.value)
                self._ceilings = Ceilings.from_json(probe.value["ceilings"])
                self._gpu_name = probe.value.get("gpu", "cuda")

    def validate(self, op: Operator, candidate: Path, workdir: Path, with_compile: bool = False) -> Validation:
        """The frozen initial kernel (the baseline) is timed with eager and, with `with_compile`, torch.compile, or
        taken from the baseline cache; any other kernel is timed alone and gets the baseline's reference times."""
        self._environment()
        gpu = self.device == "cuda"
        baseline = candidate.read_text() == op.initial_source()
        key = BaselineKey.of(
            op, self._environment_doc, {**asdict(self.timing), "seeds": self.seeds, "compile": with_compile}
        )
        doc = self.baselines.get(key) if baseline and gpu else None
        if doc is not None:
            doc["from_cache"] = True
        else:
            result = evaluate_candidate(
                op.ref,
                candidate=candidate,
                device=self.device,
                seeds=self.seeds,
                timing=asdict(self.timing) if gpu else None,
                references=("eager",) if baseline else (),
                compile_cases=[c.name for c in op.cases] if with_compile and gpu and baseline else [],
                gpu_lock=self._lock,
                timeout_s=self.timeout_s,
                extra_env=self._env,
                confinement=self.confinement,
                ceilings=self._ceilings,
                spares=None if baseline else self._spares,
            )
            doc = result.to_json()
            if baseline and gpu and result.accepted:
                self.baselines.put(key, doc)
        cases = []
        by_name = {c.name: c for c in [*op.cases, *op.small_cases]}
        for record in doc["cases"]:
            case = by_name.get(record["case"])
            metrics = case_metrics(record, op, case, self._ceilings) if case is not None and gpu else {}
            record["metrics"] = metrics
            impl = metrics.get("impl", {})
            problems = [
                p
                for part in ("validation", "recheck", "timed")
                for run in (record.get(part) or {}).get("failures", [])
                for p in run["problems"]
            ] + record.get("errors", [])
            cases.append(
                CaseResult(
                    record["case"],
                    bool(record.get("correct")),
                    "; ".join(problems[:2]),
                    impl.get("candidate", {}).get("ms"),
                    metrics.get("sol_ms"),
                    impl.get("eager", {}).get("ms"),
                    impl.get("compile", {}).get("ms"),
                )
            )
        if baseline:
            self._references[op.name] = {c.case: (c.eager_ms, c.compile_ms) for c in cases}
        else:
            refs = self._references.get(op.name, {})
            cases = [
                replace(c, eager_ms=refs.get(c.case, (None, None))[0], compile_ms=refs.get(c.case, (None, None))[1])
                for c in cases
            ]
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "harness.json").write_text(json.dumps(doc, indent=1))
        reasons = _reasons(doc)
        detail = reasons[0] if reasons else f"{len(cases)} cases correct" + (", timed" if gpu else "")
        if doc.get("from_cache"):
            detail += " (the cached baseline of this kernel on this machine)"
        seconds = {} if doc.get("from_cache") else dict(doc.get("phase_seconds") or {})
        return Validation(self.name, self._gpu_name, bool(doc.get("accepted")), detail, tuple(cases), seconds)


def _reasons(doc: dict) -> list[str]:
    """CandidateResult.reasons() of a result document (a fresh one or a cached one)."""
    from ladder.harness.evaluate import CandidateResult

    known = {k: v for k, v in doc.items() if k in CandidateResult.__dataclass_fields__}
    return CandidateResult(**known).reasons()
