"""The optimization loop: rounds driven by the ladder's policy, each committed to the history when it finishes.

Round n of an operator: take the best kernel so far (History.best; the initial kernel until a round is faster),
climb the ladder on it (policy.climb), and if the diagnosis is actionable ask the rewriter for a candidate in
that rewrite family, validate it, decide, and commit the round. An inconclusive diagnosis is recorded as such
and no rewrite is forced; an at-target diagnosis ends the operator's run, and so does an inconclusive
diagnosis that repeats the previous round's findings on the same kernel (nothing new was learned, so the next
round would repeat it too). Everything the next round needs is read back from committed rounds, so a killed
run resumes at the first uncommitted round (records.py).

Files per round, under OUT/OP/round-NNN/: base.py (the kernel diagnosed), candidate.py, validation.json,
llm-transcript.json, and whatever the levels wrote (ncu reports). Round 0 is the initial kernel's baseline.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ladder import status
from ladder.context import PastRound, digest, operator_context
from ladder.evidence import ARTIFACT, SourceRef
from ladder.facts import diagnosis_facts
from ladder.options import Options
from ladder.policy import ACTIONABLE, AT_TARGET, INCONCLUSIVE, Diagnosis, RunsLevel, climb
from ladder.records import (
    ACCEPTED,
    BASELINE,
    INVALID,
    REJECTED,
    UNTIMED,
    History,
    Rewrite,
    Round,
)
from ladder.rewriters.base import Rewriter, RewriteRequest
from ladder.validation import Validation, speedup
from ladder.validators import Validator
from suite.operator import Operator


class LoopError(RuntimeError):
    pass


class ProgressSink(Protocol):
    def update(self, op: str, round: int, total: int, stage: str) -> None: ...

    def round_done(self, r: Round) -> None: ...


@dataclass(frozen=True)
class LoopConfig:
    rounds: int = 15
    diagnose: bool = True  # False: rewrite without the ladder (the ablation baseline)
    options: Options = field(default_factory=Options)  # what the levels are asked (ladder.options)
    deadline_s: float | None = None  # start no round (baseline included) this many seconds after the Loop began
    # A candidate is accepted only this much faster than its base (geo-mean over the cases): smaller gains are
    # within the run-to-run spread of the harness's medians, and accepting them would walk the run on noise.
    min_gain: float = 0.02
    # the baseline also times torch.compile of the reference on every case (a compile per shape: minutes per
    # operator on a busy machine; `ladder bench --compile-cases all` can time it apart from the run instead)
    time_compile: bool = True


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextmanager
def _timed(seconds: dict[str, float], stage: str) -> Iterator[None]:
    began = time.monotonic()
    try:
        yield
    finally:
        seconds[stage] = round(time.monotonic() - began, 3)


def round_dir(out: Path, op: str, number: int) -> Path:
    return out / op / f"round-{number:03d}"


class Loop:
    def __init__(
        self,
        history: History,
        out: Path,
        rewriter: Rewriter,
        validator: Validator,
        levels: Mapping[str, RunsLevel],
        config: LoopConfig,
        progress: ProgressSink | None = None,
    ):
        self.history, self.out, self.rewriter, self.validator = history, out, rewriter, validator
        self.levels, self.config, self.progress = levels, config, progress
        self.began = time.monotonic()
        self.cut_short = False  # the last run() left a round unstarted because of config.deadline_s

    def _out_of_time(self) -> bool:
        d = self.config.deadline_s
        self.cut_short = d is not None and time.monotonic() - self.began >= d
        return self.cut_short

    def _stage(self, op: str, number: int, stage: str) -> None:
        status.doing(f"{op} round {number}: {stage}")
        if self.progress:
            self.progress.update(op, number, self.config.rounds, stage)

    def _commit(self, r: Round) -> None:
        self.history.commit(r)
        if self.progress:
            self.progress.round_done(r)

    def run(self, op: Operator) -> list[Round]:
        """Run (or resume) `op` up to config.rounds, or until the deadline; returns every round of it in the history.

        The operator stops early when a round finds it at target, when this rewriter had nothing untried left
        for the kernel, or when an inconclusive diagnosis repeated itself (either way its next round would be
        the same)."""
        self.cut_short = False
        baseline = self.history.get(op.name, 0)
        if baseline is None:
            if self._out_of_time():
                return []
            self._stage(op.name, 0, "baseline")
            baseline = self._baseline(op)
            self._commit(baseline)
        elif baseline.validation and baseline.validation.validator != self.validator.name:
            raise LoopError(
                f"{op.name} in {self.history.path} was validated with {baseline.validation.validator!r}; "
                f"resume with that validator, or start a new --out"
            )
        while (n := self.history.next_round(op.name)) <= self.config.rounds:
            last = self.history.get(op.name, n - 1)
            if last and (last.decision == AT_TARGET or self._exhausted(last) or self._repeats(last)):
                break
            if self._out_of_time():
                return self.history.rounds(op.name)
            self._commit(self._round(op, n))
        self._stage(op.name, self.config.rounds, "done")
        return self.history.rounds(op.name)

    def _exhausted(self, r: Round) -> bool:
        return (
            r.decision == INVALID
            and r.rewrite is not None
            and r.rewrite.exhausted
            and r.rewrite.rewriter == self.rewriter.name
        )

    def _repeats(self, r: Round) -> bool:
        """An inconclusive round whose diagnosis of the same kernel is the previous round's."""
        prev = self.history.get(r.op, r.round - 1) if r.round > 1 else None
        return (
            r.decision == INCONCLUSIVE
            and prev is not None
            and prev.decision == INCONCLUSIVE
            and prev.base_round == r.base_round
            and prev.diagnosis is not None
            and r.diagnosis is not None
            and _findings(prev.diagnosis) == _findings(r.diagnosis)
        )

    def _past(self, op: Operator) -> tuple[PastRound, ...]:
        rounds = self.history.rounds(op.name)
        sources = {r.round: r.rewrite.source for r in rounds if r.rewrite and r.rewrite.source}
        sources[0] = op.initial_source()
        past = []
        for r in rounds:
            if r.round == 0:
                continue
            base = sources.get(r.base_round)
            rw = r.rewrite
            ref = round_dir(self.out, op.name, r.round) / "diagnosis.json" if r.diagnosis else None
            past.append(
                PastRound(
                    r.round,
                    rw.family if rw else None,
                    r.decision,
                    r.speedup,
                    r.reason[:200],
                    kernel=digest(base) if base is not None else None,
                    candidate=digest(rw.source) if rw and rw.source else None,
                    facts=diagnosis_facts(r.diagnosis),
                    facts_ref=str(ref) if ref else None,
                )
            )
        return tuple(past)

    def _validate(self, op: Operator, kernel: Path, rdir: Path, with_compile: bool = False) -> tuple[Validation, Path]:
        v = self.validator.validate(op, kernel, rdir, with_compile=with_compile)
        path = rdir / "validation.json"
        path.write_text(json.dumps(v.to_json(), indent=1))
        return v, path

    def _fresh_dir(self, op: str, number: int) -> Path:
        rdir = round_dir(self.out, op, number)
        if rdir.exists():  # left by a run killed before it committed this round
            shutil.rmtree(rdir)
        rdir.mkdir(parents=True)
        return rdir

    def _baseline(self, op: Operator) -> Round:
        started = _now()
        rdir = self._fresh_dir(op.name, 0)
        kernel = rdir / "candidate.py"
        kernel.write_text(op.initial_source())
        # torch.compile's times depend on the reference alone: the baseline times it once per case for the report
        seconds: dict[str, float] = {}
        with _timed(seconds, "baseline"):
            v, vpath = self._validate(op, kernel, rdir, with_compile=self.config.time_compile)
        seconds.update(_harness_seconds(v))
        return Round(
            op.name,
            0,
            0,
            BASELINE,
            "the frozen initial kernel" + ("" if v.correct else f": {v.detail}"),
            goal=self._goal(),
            validation=v,
            speedup=1.0 if v.timed else None,
            speedup_initial=1.0 if v.timed else None,
            artifacts={"candidate": str(kernel), "validation": str(vpath)},
            started=started,
            finished=_now(),
            seconds=seconds,
        )

    def _goal(self) -> str:
        return f"{self.config.options.sol_target:.0%} of speed of light on every case"

    def _round(self, op: Operator, n: int) -> Round:
        started = _now()
        best = self.history.best(op.name) or self.history.get(op.name, 0)
        assert best is not None
        rdir = self._fresh_dir(op.name, n)
        base_path = rdir / "base.py"  # from the record, not the earlier round's file: the record is the truth
        base_path.write_text(op.initial_source() if best.round == 0 or best.rewrite is None else best.rewrite.source)
        past = self._past(op)
        seconds: dict[str, float] = {}  # filled stage by stage; every Round below is built after its stages
        common: dict[str, Any] = {"goal": self._goal(), "started": started, "seconds": seconds}
        diagnosis: Diagnosis | None = None
        if self.config.diagnose:
            self._stage(op.name, n, "diagnose")
            ref = SourceRef(ARTIFACT, best.artifacts["validation"]) if "validation" in best.artifacts else None
            ctx = operator_context(
                op, base_path, rdir, n, best.validation, ref, history=past, options=self.config.options
            )
            with _timed(seconds, "diagnose"):
                diagnosis = climb(ctx, self.levels)
            (rdir / "diagnosis.json").write_text(json.dumps(diagnosis.to_json(), indent=1))
            if diagnosis.outcome != ACTIONABLE:
                decision = AT_TARGET if diagnosis.outcome == AT_TARGET else INCONCLUSIVE
                r = Round(
                    op.name,
                    n,
                    best.round,
                    decision,
                    _why_not(diagnosis),
                    _next_for(diagnosis),
                    diagnosis=diagnosis,
                    finished=_now(),
                    **common,
                )
                if self._repeats(r):
                    r = replace(
                        r,
                        next=f"stop: this diagnosis repeats round {n - 1}'s on the same kernel, so "
                        f"repeating it teaches nothing: it needs more evidence (counters on a GPU, "
                        f"more cases) or another rewriter (--llm)",
                    )
                return r
        self._stage(op.name, n, f"rewrite ({self.rewriter.name})")
        with _timed(seconds, "rewrite"):
            rewrite = self.rewriter.rewrite(
                RewriteRequest(op, best.round, base_path.read_text(), best.validation, diagnosis, past, rdir)
            )
        if not rewrite.source:
            last = rewrite.attempts[-1].error if rewrite.attempts else "no reply"
            if rewrite.exhausted:
                return Round(
                    op.name,
                    n,
                    best.round,
                    INVALID,
                    f"nothing left to try: {last}",
                    f"stop: {rewrite.rewriter} has no untried candidate for this kernel; another rewriter "
                    f"(--llm) or a new diagnosis is needed",
                    diagnosis=diagnosis,
                    rewrite=rewrite,
                    finished=_now(),
                    **common,
                )
            return Round(
                op.name,
                n,
                best.round,
                INVALID,
                f"no usable module: {last}",
                "the same evidence again; the rewriter's replies were malformed",
                diagnosis=diagnosis,
                rewrite=rewrite,
                finished=_now(),
                **common,
            )
        candidate = rdir / "candidate.py"
        candidate.write_text(rewrite.source)
        self._stage(op.name, n, f"validate ({self.validator.name})")
        with _timed(seconds, "validate"):
            v, vpath = self._validate(op, candidate, rdir)
        seconds.update(_harness_seconds(v))
        decision, reason, gain, gain0 = self._decide(op, best, v)
        return Round(
            op.name,
            n,
            best.round,
            decision,
            reason,
            _next_after(decision, rewrite, reason),
            diagnosis=diagnosis,
            rewrite=rewrite,
            validation=v,
            speedup=gain,
            speedup_initial=gain0,
            artifacts={"candidate": str(candidate), "validation": str(vpath), "base": str(base_path)},
            finished=_now(),
            **common,
        )

    def _decide(self, op: Operator, best: Round, v: Validation) -> tuple[str, str, float | None, float | None]:
        if not v.correct:
            return REJECTED, f"incorrect: {v.detail}", None, None
        if not v.timed:
            return UNTIMED, f"correct ({v.detail}) but not timed on {v.device}", None, None
        base_v, initial = best.validation, self.history.get(op.name, 0)
        gain = speedup(base_v.times(), v.times()) if base_v and base_v.timed else None
        if gain is None:
            return REJECTED, f"round {best.round} has no timings on the same cases to compare with", None, None
        gain0 = speedup(initial.validation.times(), v.times()) if initial and initial.validation else None
        if gain >= 1.0 + self.config.min_gain:
            return ACCEPTED, f"{gain:.3g}x faster than round {best.round}", gain, gain0
        if gain > 1.0:
            return (
                REJECTED,
                f"correct, {gain:.4g}x of round {best.round}: within the {self.config.min_gain:.0%} "
                f"noise margin, not a gain",
                gain,
                gain0,
            )
        return REJECTED, f"correct but {gain:.3g}x of round {best.round}: not faster", gain, gain0


def _harness_seconds(v: Validation) -> dict[str, float]:
    """The validator's own account of its time (runner start, GPU lock waits, commands), as `harness.` stages."""
    return {f"harness.{phase}": float(s) for phase, s in v.seconds.items()}


def _findings(d: Diagnosis) -> tuple:
    """What a diagnosis found, level by level: status, hypotheses, families and the first failing stop test.
    Free text is left out (a failed level's traceback names the round's own directory)."""
    return tuple(
        (
            r.level,
            r.status,
            sorted(h.bottleneck for h in r.hypotheses),
            sorted(f.name for f in r.families),
            (r.tests.first_failure() or ("",))[0] if r.tests else "",
        )
        for r in d.results
    )


def _why_not(d: Diagnosis) -> str:
    if d.outcome == AT_TARGET:
        return "every case runs within target of speed of light"
    return "no level could stop: " + "; ".join(
        f"{x['level']} {x['failed_test'] or x['status']}: {x['why']}" for x in d.escalations()
    )


def _next_for(d: Diagnosis) -> str:
    if d.outcome == AT_TARGET:
        return "stop: nothing left to gain against speed of light"
    missing = [r.level for r in d.results if r.status != "ran"]
    if missing:
        return f"gather the evidence these levels could not: {', '.join(missing)}"
    return "no level settles on one rewrite family: widen the evidence (more cases, counters, IR) before rewriting"


def _next_after(decision: str, rewrite: Rewrite, reason: str) -> str:
    family = rewrite.family or "the rewrite"
    if decision == ACCEPTED:
        return f"continue from this round; re-diagnose: {family} changed the bottleneck profile"
    if decision == UNTIMED:
        return "time this candidate on the GPU before building on it"
    return f"do not repeat {family} as written: {reason[:200]}"
