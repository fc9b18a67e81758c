"""What a run achieved: per-operator speedups of the best round, the suite aggregate, the level accounting, and
where the rounds came from and went: which rewriter produced each candidate and what became of it, which family
each diagnosis settled on, why the rounds that did not count did not, the wall time each stage took, and the
run's throughput (evaluations a minute of the time any round was in progress, so that a run resumed across several
invocations counts only the time it ran).

Best round = highest validated geo-mean speedup over the initial kernel, earlier round on ties (History.best);
round 0 (the initial kernel itself, 1.0x) when no round beat it. The paper's level accounting: the evidence
level of each operator's best round (the level whose stop tests passed), and whether each operator's
trajectory of rounds reached each level (the ladder climbed to it in at least one round).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ladder import gpu_busy
from ladder.evidence import LEVEL_NAMES, RAN
from ladder.records import ACCEPTED, BASELINE, REJECTED, History, Round
from ladder.validation import Validation
from suite.stats import geomean

INITIAL = "initial"  # the evidence level of a best round that is the initial kernel
MOE_OPS = ("moe_group_top2", "moe_grouped_topk")  # reported also without them (docs/suite-protocol.md#aggregation)
# Round.seconds' stages in the order a run goes through them: round 0's validation, then each round's three; then
# the harness's account of its validations (ladder.harness.evaluate: the runner's start, waits for the GPU, each
# command, compile the one outside any hold; transfer is the outputs' copy out of shared memory, inside
# validate/recheck/timed_outputs)
STAGES = ("baseline", "diagnose", "rewrite", "validate")
HARNESS = (
    "start",
    "compile",
    "wait_memory",
    "wait_shared",
    "wait_alone",
    "tune",
    "validate",
    "transfer",
    "prepare",
    "time",
    "timed_outputs",
    "exercise",
    "recheck",
    "release",
    "memory_retry",  # the cases evaluated again alone after running out of device memory, all their phases
)


def _stage_order(stage: str) -> tuple[int, int, str]:
    if stage in STAGES:
        return 0, STAGES.index(stage), stage
    phase = stage.removeprefix("harness.")
    return 1, HARNESS.index(phase) if phase in HARNESS else len(HARNESS), stage


def _ratio(v: Validation, num: str, den: str, fallback: Validation | None = None) -> float | None:
    """Geo-mean over the cases of v's `num` times over its `den` times; None unless every case has both.
    `num` times v lacks come from `fallback` (the baseline: torch.compile is timed once per case, with it)."""
    a, b = v.times(num), v.times(den)
    if fallback is not None:
        a = {**fallback.times(num), **a}
        a = {c: t for c, t in a.items() if c in b}
    if not a or set(a) != set(b) or len(a) != len(v.cases):
        return None
    return geomean(a[c] / b[c] for c in a)


@dataclass
class OpSummary:
    op: str
    rounds: int  # rounds after the baseline
    best_round: int | None  # None: nothing was timed
    best_level: str | None  # L1..L4, "initial", or None (best round had no diagnosis: --no-ladder)
    speedup_initial: float | None
    vs_eager: float | None  # eager time over the best kernel's, geo-mean over cases
    vs_compile: float | None
    sol_fraction: float | None  # speed of light over the best kernel's time, geo-mean over cases
    reached: dict[str, bool] = field(default_factory=dict)  # the ladder climbed to the level in some round
    ran: dict[str, bool] = field(default_factory=dict)  # … and the level could run there
    decisions: dict[str, int] = field(default_factory=dict)
    tokens: int = 0


def summarize_op(history: History, op: str) -> OpSummary:
    rounds = history.rounds(op)
    best = history.best(op)
    diagnosed = [r.diagnosis for r in rounds if r.diagnosis]
    reached_max = max((LEVEL_NAMES.index(d.reached) for d in diagnosed if d.reached), default=-1)
    ran = {lr.level for d in diagnosed for lr in d.results if lr.status == RAN}
    s = OpSummary(
        op,
        sum(1 for r in rounds if r.round > 0),
        None,
        None,
        None,
        None,
        None,
        None,
        reached={lv: i <= reached_max for i, lv in enumerate(LEVEL_NAMES)},
        ran={lv: lv in ran for lv in LEVEL_NAMES},
        decisions=dict(Counter(r.decision for r in rounds if r.decision != BASELINE)),
        tokens=sum(r.rewrite.usage.get("total_tokens", 0) for r in rounds if r.rewrite),
    )
    if best is None or best.validation is None:
        return s
    v = best.validation
    s.best_round, s.speedup_initial = best.round, best.speedup_initial
    s.best_level = INITIAL if best.round == 0 else best.level
    baseline = next((r.validation for r in rounds if r.round == 0), None)
    # a candidate's round times it alone: eager's and torch.compile's times are the baseline's
    s.vs_eager, s.vs_compile = _ratio(v, "eager_ms", "ms", baseline), _ratio(v, "compile_ms", "ms", baseline)
    s.sol_fraction = _ratio(v, "sol_ms", "ms")
    return s


@dataclass
class SuiteSummary:
    ops: list[OpSummary]
    timed: int  # operators with a timed best round
    geomean: float | None
    median: float | None
    over_2x: int
    over_5x: int
    geomean_without_moe: float | None
    vs_eager_geomean: float | None
    vs_compile_geomean: float | None
    sol_geomean: float | None  # the best rounds' fraction of speed of light, geo-mean over operators
    best_level_counts: dict[str, int]  # evidence level of the best round → number of operators
    reached_counts: dict[str, int]  # level → operators whose trajectory reached it
    ran_counts: dict[str, int]  # level → operators where it ran in at least one round
    # rewriter ("offline:APPLIER", "llm:MODEL") → decision → rounds whose candidate it produced
    rewriters: dict[str, dict[str, int]] = field(default_factory=dict)
    families: dict[str, dict[str, int]] = field(default_factory=dict)  # diagnosed family → decision → rounds
    # why rounds after the baseline did not count (their reason, case, seed and figures taken out) → rounds, operators
    not_counted: dict[str, dict[str, Any]] = field(default_factory=dict)
    stage_seconds: dict[str, list[float]] = field(default_factory=dict)  # stage → wall seconds, one per round
    gpu_busy: dict[str, float] | None = None  # ladder.gpu_busy.Busy of the run's samples, when it took any
    throughput: dict[str, float] | None = None  # Throughput, when any round ran the harness

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Throughput:
    """The evaluations (baselines measured and rounds validated) and the seconds in which some round was in
    progress: the union of the rounds' spans, so the gaps between the invocations of a resumed run are not counted."""

    baselines: int
    rounds: int
    seconds: float

    @property
    def per_minute(self) -> float:
        return (self.baselines + self.rounds) * 60 / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict[str, float]:
        return {**asdict(self), "per_minute": round(self.per_minute, 2)}


def throughput(rounds: list[Round]) -> Throughput | None:
    """Baselines that ran the harness (a cached one does not) and rounds that validated a candidate, over the
    merged spans of every round; None when no round has both timestamps."""
    spans = sorted(
        (datetime.fromisoformat(r.started).timestamp(), datetime.fromisoformat(r.finished).timestamp())
        for r in rounds
        if r.started and r.finished
    )
    seconds, end = 0.0, float("-inf")
    for start, stop in spans:
        seconds += max(0.0, stop - max(start, end))
        end = max(end, stop)
    if not spans:
        return None
    measured = [r for r in rounds if "harness.validate" in r.seconds]
    return Throughput(
        baselines=sum(r.round == 0 for r in measured), rounds=sum(r.round > 0 for r in measured), seconds=seconds
    )


def _geo(values: list[float | None]) -> float | None:
    return geomean(v for v in values if v is not None)


def _tally(rounds: list[Round], key: Callable[[Round], str | None]) -> dict[str, dict[str, int]]:
    """key(round) → decision → rounds, for the rounds after the baseline that have a key; most rounds first."""
    counts: dict[str, Counter[str]] = {}
    for r in rounds:
        if r.round > 0 and (k := key(r)) is not None:
            counts.setdefault(k, Counter())[r.decision] += 1
    return {k: dict(c) for k, c in sorted(counts.items(), key=lambda kc: (-kc[1].total(), kc[0]))}


# what varies between rounds that failed for the same reason: where (case, phase, input kind, seed) and figures
_WHERE = re.compile(r"\b[cs]\d+ [\w-]+ [\w/-]+ seed \d+: ")
_FIGURE = re.compile(r"\d+(\.\d+)?(e-?\d+)?")
REASON_KINDS = 15  # rows of the report's table; the JSON keeps them all
REASON_KIND_CHARS = 160


def reason_kind(reason: str) -> str:
    """A round's reason with what varies between rounds failing alike taken out: its first line's first clause,
    without the case, phase and seed it names, figures as N."""
    first = _WHERE.sub("", (reason.splitlines() or [""])[0].split("; ")[0])
    return _FIGURE.sub("N", first)[:REASON_KIND_CHARS]


def _not_counted(rounds: list[Round]) -> dict[str, dict[str, Any]]:
    kinds: dict[str, dict[str, Any]] = {}
    for r in rounds:
        if r.round > 0 and r.decision != ACCEPTED:
            entry = kinds.setdefault(reason_kind(r.reason), {"rounds": 0, "ops": []})
            entry["rounds"] += 1
            if r.op not in entry["ops"]:
                entry["ops"].append(r.op)
    return dict(sorted(kinds.items(), key=lambda kv: (-kv[1]["rounds"], kv[0])))


def summarize(history: History, run_dir: Path | None = None) -> SuiteSummary:
    """The run's summary; `run_dir` (the history's directory) adds its GPU-busy samples (ladder.gpu_busy)."""
    ops = [summarize_op(history, op) for op in history.ops()]
    busy = gpu_busy.summary(run_dir) if run_dir is not None else None
    rounds = history.rounds()
    stage_seconds: dict[str, list[float]] = {}
    for r in rounds:
        for stage, s in r.seconds.items():
            stage_seconds.setdefault(stage, []).append(s)
    speedups = [o.speedup_initial for o in ops if o.speedup_initial is not None]
    levels = Counter(o.best_level or "no diagnosis" for o in ops if o.best_round is not None)
    return SuiteSummary(
        ops=ops,
        timed=len(speedups),
        geomean=_geo(list(speedups)),
        median=statistics.median(speedups) if speedups else None,
        over_2x=sum(s > 2 for s in speedups),
        over_5x=sum(s > 5 for s in speedups),
        geomean_without_moe=_geo([o.speedup_initial for o in ops if o.op not in MOE_OPS]),
        vs_eager_geomean=_geo([o.vs_eager for o in ops]),
        vs_compile_geomean=_geo([o.vs_compile for o in ops]),
        sol_geomean=_geo([o.sol_fraction for o in ops]),
        best_level_counts={k: levels[k] for k in (*LEVEL_NAMES, INITIAL, "no diagnosis") if levels[k]},
        reached_counts={lv: sum(o.reached[lv] for o in ops) for lv in LEVEL_NAMES},
        ran_counts={lv: sum(o.ran[lv] for o in ops) for lv in LEVEL_NAMES},
        rewriters=_tally(rounds, lambda r: r.rewrite.rewriter if r.rewrite and r.rewrite.source else None),
        families=_tally(rounds, lambda r: r.diagnosis.family.name if r.diagnosis and r.diagnosis.family else None),
        not_counted=_not_counted(rounds),
        stage_seconds=stage_seconds,
        gpu_busy=busy.to_json() if busy else None,
        throughput=t.to_json() if (t := throughput(rounds)) else None,
    )


def _x(v: float | None, fmt: str = "{:.2f}x") -> str:
    return fmt.format(v) if v is not None else "–"


def render(s: SuiteSummary) -> str:
    lines = [
        "| operator | rounds | best round | evidence level | vs initial | vs eager | vs torch.compile | "
        "% of SoL | L1 | L2 | L3 | L4 | decisions | tokens |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for o in s.ops:
        reached = " | ".join("✓" if o.ran[lv] else "○" if o.reached[lv] else "·" for lv in LEVEL_NAMES)
        decisions = ", ".join(f"{k} {v}" for k, v in sorted(o.decisions.items()))
        best = "–" if o.best_round is None else str(o.best_round)
        lines.append(
            f"| {o.op} | {o.rounds} | {best} | {o.best_level or '–'} | {_x(o.speedup_initial)} | "
            f"{_x(o.vs_eager)} | {_x(o.vs_compile)} | {_x(o.sol_fraction, '{:.0%}')} | {reached} | "
            f"{decisions} | {o.tokens} |"
        )
    lines += ["", f"Operators with a timed best round: {s.timed} of {len(s.ops)}."]
    if s.timed:
        lines.append(
            f"vs initial: geo-mean {_x(s.geomean)}, median {_x(s.median)}, >2x: {s.over_2x}, >5x: "
            f"{s.over_5x}; geo-mean without the MoE operators {_x(s.geomean_without_moe)}. vs eager: "
            f"geo-mean {_x(s.vs_eager_geomean)}; vs torch.compile: {_x(s.vs_compile_geomean)}; of speed of light: "
            f"geo-mean {_x(s.sol_geomean, '{:.0%}')}."
        )
    lines += [
        "",
        "Level accounting: evidence level of each operator's best round: "
        + (", ".join(f"{k} {v}" for k, v in s.best_level_counts.items()) or "none timed")
        + ". Operators whose rounds reached each level (and where it could run): "
        + ", ".join(f"{lv} {s.reached_counts[lv]} ({s.ran_counts[lv]})" for lv in LEVEL_NAMES)
        + ".",
        "Level columns: ✓ ran in some round, ○ reached but could not run (unavailable or failed), · never reached.",
    ]
    lines += _accounting("rewriter of the candidate", s.rewriters)
    lines += _accounting("family the diagnosis settled on", s.families)
    if s.not_counted:
        lines += ["", "| why a round did not count | rounds | operators |", "|---|---|---|"]
        for kind, entry in list(s.not_counted.items())[:REASON_KINDS]:
            cell = kind.replace("|", "\\|")
            lines.append(f"| {cell} | {entry['rounds']} | {', '.join(entry['ops'])} |")
        if len(s.not_counted) > REASON_KINDS:
            lines.append(f"| (and {len(s.not_counted) - REASON_KINDS} other reasons: the JSON summary has them) | | |")
    if s.stage_seconds:
        lines += ["", "| stage | rounds | median s | total s |", "|---|---|---|---|"]
        for stage, t in sorted(s.stage_seconds.items(), key=lambda st: _stage_order(st[0])):
            lines.append(f"| {stage} | {len(t)} | {statistics.median(t):.1f} | {sum(t):.0f} |")
    if s.throughput:
        rate = s.throughput
        lines += [
            "",
            f"Throughput: {rate['baselines']:.0f} baselines measured and {rate['rounds']:.0f} rounds validated in "
            f"{rate['seconds']:.0f} s of run time (the rounds' spans merged): {rate['per_minute']:.1f} evaluations a "
            "minute.",
        ]
    if s.gpu_busy:
        b = s.gpu_busy
        lines += [
            "",
            f"GPU busy: a kernel ran in {b['busy_share']:.0%} of {b['samples']:.0f} one-second samples; mean "
            f"utilization {b['mean_util']:.0f} %.",
        ]
    return "\n".join(lines)


def _accounting(what: str, tally: dict[str, dict[str, int]]) -> list[str]:
    """A table of rounds per `what` (rounds after the baseline): accepted, rejected, the other decisions."""
    if not tally:
        return []
    lines = ["", f"| {what} | rounds | accepted | rejected | other |", "|---|---|---|---|---|"]
    for name, decisions in tally.items():
        other = ", ".join(f"{d} {n}" for d, n in sorted(decisions.items()) if d not in (ACCEPTED, REJECTED))
        lines.append(
            f"| {name} | {sum(decisions.values())} | {decisions.get(ACCEPTED, 0)} | {decisions.get(REJECTED, 0)} | "
            f"{other or '–'} |"
        )
    return lines


def plot(s: SuiteSummary, path: Path) -> Path:
    """Distribution of per-operator speedups of the best round (vs initial and vs eager), log scale, and beside
    each its fraction of speed of light (right axis), as PNG: how far each is from the hardware, not only from
    eager."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranked = sorted(((o, x) for o in s.ops if (x := o.speedup_initial) is not None), key=lambda ox: ox[1])
    ops = [o for o, _ in ranked]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(ops) + 2), 4.5))
    xs = range(len(ops))
    ax.bar(xs, [x for _, x in ranked], color="#3b6ea8", label="vs initial kernel")
    eager = [(i, o.vs_eager) for i, o in enumerate(ops) if o.vs_eager is not None]
    if eager:
        ax.scatter([i for i, _ in eager], [v for _, v in eager], color="#d95f02", zorder=3, label="vs eager")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(list(xs), [o.op for o in ops], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("speedup of the best round (geo-mean over cases)")
    ax.set_title(f"{len(ops)} operators" + (f"; geo-mean {s.geomean:.2f}x vs initial" if s.geomean else ""))
    sol = [(i, o.sol_fraction) for i, o in enumerate(ops) if o.sol_fraction is not None]
    handles, labels = ax.get_legend_handles_labels()
    if sol:
        right = ax.twinx()
        right.scatter([i for i, _ in sol], [100 * v for _, v in sol], marker="_", s=120, color="#1b9e77", zorder=4)
        right.set_ylim(0, 110)
        right.set_ylabel("% of speed of light (—)")
        handles.append(right.collections[0])
        labels.append("% of speed of light")
    ax.legend(handles, labels, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
