"""Progress of long runs: one bar per operator (rich), one line per finished round, and a heartbeat that says
what every job is doing and what it waits for (ladder.status), on the terminal and in RUN/progress.log."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from ladder import status
from ladder.records import ACCEPTED, BASELINE, Round

LOG = "progress.log"
HEARTBEAT_S = 30.0
REASON_CHARS = 160


def round_line(r: Round) -> str:
    parts = [f"{r.op} round {r.round}: {r.decision}"]
    if r.speedup is not None:
        parts.append(f"{r.speedup:.3g}x vs round {r.base_round}")
    if r.decision not in (ACCEPTED, BASELINE) and r.reason:
        # why a round did not count is what a reader of an overnight run's log asks first
        parts.append(r.reason if len(r.reason) <= REASON_CHARS else r.reason[: REASON_CHARS - 1] + "…")
    if r.diagnosis is not None:
        where = f"stopped at {r.level}" if r.level else f"climbed to {r.diagnosis.reached}"
        parts.append(where + (f", {r.diagnosis.family.name}" if r.diagnosis.family else ""))
    if r.rewrite and r.rewrite.usage:
        parts.append(f"{r.rewrite.usage.get('total_tokens', 0)} tokens")
    stages = [v for k, v in r.seconds.items() if not k.startswith("harness.")]
    if stages:
        parts.append(f"{sum(stages):.1f} s")
    return " · ".join(parts)


class RunLog:
    """Implements loop.ProgressSink: round lines and heartbeats, timestamped, appended to a file and (unless
    quiet) echoed to a console. A heartbeat thread writes `status.lines()` every `heartbeat_s` while open."""

    def __init__(self, path: Path, console: Console | None, heartbeat_s: float = HEARTBEAT_S):
        self.path, self.console, self.heartbeat_s = path, console, heartbeat_s
        self._stop = threading.Event()
        self._write = threading.Lock()
        self._thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)

    def __enter__(self) -> RunLog:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def line(self, text: str) -> None:
        with self._write, self.path.open("a") as f:
            f.write(f"{time.strftime('%H:%M:%S')} {text}\n")
        if self.console is not None:
            self.console.log(text)

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            jobs = status.lines()
            if jobs:
                self.line("heartbeat: " + " | ".join(jobs))

    def update(self, op: str, round: int, total: int, stage: str) -> None:
        pass

    def round_done(self, r: Round) -> None:
        self.line(round_line(r))


class RichProgress:
    """Implements loop.ProgressSink. Draws on stderr; a non-terminal stderr gets the round lines only."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True, log_path=False)
        self.bar = Progress(
            TextColumn("{task.fields[op]:<24}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stage]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> RichProgress:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def update(self, op: str, round: int, total: int, stage: str) -> None:
        if op not in self.tasks:
            self.tasks[op] = self.bar.add_task(op, total=total, op=op, stage=stage)
        self.bar.update(
            self.tasks[op], completed=min(round, total) if stage == "done" else max(round - 1, 0), stage=stage
        )

    def round_done(self, r: Round) -> None:
        if r.op in self.tasks:
            self.bar.update(self.tasks[r.op], completed=r.round)


class Tee:
    """Implements loop.ProgressSink: every update and round to each sink given (None ones left out)."""

    def __init__(self, *sinks: RichProgress | RunLog | None):
        self.sinks = [s for s in sinks if s is not None]

    def update(self, op: str, round: int, total: int, stage: str) -> None:
        for s in self.sinks:
            s.update(op, round, total, stage)

    def round_done(self, r: Round) -> None:
        for s in self.sinks:
            s.round_done(r)
