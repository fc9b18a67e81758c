"""Progress display for long runs (rich): one bar per operator, and one line per finished round."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from ladder.records import Round


def round_line(r: Round) -> str:
    parts = [f"{r.op} round {r.round}: {r.decision}"]
    if r.speedup is not None:
        parts.append(f"{r.speedup:.3g}x vs round {r.base_round}")
    if r.diagnosis is not None:
        where = f"stopped at {r.level}" if r.level else f"climbed to {r.diagnosis.reached}"
        parts.append(where + (f", {r.diagnosis.family.name}" if r.diagnosis.family else ""))
    if r.rewrite and r.rewrite.usage:
        parts.append(f"{r.rewrite.usage.get('total_tokens', 0)} tokens")
    return " · ".join(parts)


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
        self.console.log(round_line(r))
        if r.op in self.tasks:
            self.bar.update(self.tasks[r.op], completed=r.round)
