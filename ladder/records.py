"""Round records and the history store: SQLite (WAL, schema-versioned), one transaction per finished round.

A round is the unit of resumption: the loop derives everything it needs (next round number, current best
kernel) from committed rounds, so a run killed at any point — `kill -9` included — resumes at the first
round not committed, loses no finished round, and cannot record one twice ((op, round) is the primary key).
Rounds leave a run as JSON lines in the format the patterns synthesizer defines (ladder/round_lines.py).
"""

from __future__ import annotations

import fcntl
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ladder.policy import AT_TARGET, INCONCLUSIVE, Diagnosis
from ladder.validation import Validation

SCHEMA_VERSION = 1

# Round decisions.
BASELINE = "baseline"  # round 0: the frozen initial kernel, validated and timed as the reference
ACCEPTED = "accepted"  # correct, timed, and faster than the kernel it rewrote (the best so far): the new best
REJECTED = "rejected"  # incorrect, or correct but not faster
UNTIMED = "untimed"  # correct, but validated without timings (CPU): cannot become the best
INVALID = "invalid"  # the rewriter produced no usable module
# INCONCLUSIVE (no level could stop: no rewrite was forced) and AT_TARGET (every case within target of speed of
# light: nothing left to do) are the diagnosis outcomes of ladder.policy: such a round is decided by its diagnosis.
DECISIONS = (BASELINE, ACCEPTED, REJECTED, UNTIMED, INVALID, INCONCLUSIVE, AT_TARGET)


# Attempt.finish_reason of a rewriter that had no untried candidate left for the kernel (the offline rewriter).
NOTHING_LEFT = "nothing-left"


class HistoryError(RuntimeError):
    pass


@dataclass(frozen=True)
class Attempt:
    """One request to the rewriter; `error` says why its reply was not usable (None: it was)."""

    error: str | None
    usage: Mapping[str, int] = field(default_factory=dict)
    finish_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"error": self.error, "usage": dict(self.usage), "finish_reason": self.finish_reason}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Attempt:
        return cls(d.get("error"), dict(d.get("usage", {})), d.get("finish_reason"))


@dataclass(frozen=True)
class Rewrite:
    rewriter: str  # "llm:MODEL", "offline:APPLIER", …
    family: str | None  # the rewrite family the diagnosis settled on (None without a diagnosis)
    description: str  # what the rewriter says it changed
    source: str  # the complete candidate module ("" when no usable module came back)
    diff: str  # unified diff from the kernel it rewrote
    attempts: tuple[Attempt, ...] = ()

    @property
    def exhausted(self) -> bool:
        """The rewriter had nothing untried left for this kernel: its last attempt finished with NOTHING_LEFT."""
        return bool(self.attempts) and self.attempts[-1].finish_reason == NOTHING_LEFT

    @property
    def usage(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for a in self.attempts:
            for k, v in a.usage.items():
                total[k] = total.get(k, 0) + int(v)
        return total

    def to_json(self) -> dict[str, Any]:
        return {
            "rewriter": self.rewriter,
            "family": self.family,
            "description": self.description,
            "source": self.source,
            "diff": self.diff,
            "attempts": [a.to_json() for a in self.attempts],
            "usage": self.usage,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Rewrite:
        return cls(
            d["rewriter"],
            d.get("family"),
            d["description"],
            d["source"],
            d["diff"],
            tuple(Attempt.from_json(a) for a in d.get("attempts", ())),
        )


@dataclass(frozen=True)
class Round:
    op: str
    round: int  # 0 is the baseline
    base_round: int  # the round whose kernel this one started from: its comparison target
    decision: str
    reason: str  # why that decision, in words
    next: str = ""  # what the next round should do
    goal: str = ""  # what the round aims at, e.g. "80% of speed of light" (the compile target is the options')
    diagnosis: Diagnosis | None = None
    rewrite: Rewrite | None = None
    validation: Validation | None = None
    speedup: float | None = None  # validated geo-mean over the cases, vs the base round (correct and timed only)
    speedup_initial: float | None = None  # the same vs round 0, the frozen initial kernel
    artifacts: Mapping[str, str] = field(default_factory=dict)  # name → path: candidate.py, validation.json, …
    started: str = ""
    finished: str = ""
    # wall seconds of each stage the round ran (baseline; diagnose, rewrite, validate): where a run's time goes
    seconds: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.decision not in DECISIONS:
            raise ValueError(f"round decision {self.decision!r} is not one of {', '.join(DECISIONS)}")
        if self.round < 0 or (self.round == 0) != (self.decision == BASELINE):
            raise ValueError(f"round {self.round} with decision {self.decision}: only round 0 is the baseline")
        if self.speedup_initial is not None and not (self.validation and self.validation.timed):
            raise ValueError(f"{self.op} round {self.round} claims a speedup without a correct, timed validation")

    @property
    def level(self) -> str | None:
        """The level whose stop tests passed (the evidence level of this round's rewrite)."""
        return self.diagnosis.level if self.diagnosis else None

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "round": self.round,
            "base_round": self.base_round,
            "decision": self.decision,
            "reason": self.reason,
            "next": self.next,
            "goal": self.goal,
            "diagnosis": self.diagnosis.to_json() if self.diagnosis else None,
            "rewrite": self.rewrite.to_json() if self.rewrite else None,
            "validation": self.validation.to_json() if self.validation else None,
            "speedup": self.speedup,
            "speedup_initial": self.speedup_initial,
            "artifacts": dict(self.artifacts),
            "started": self.started,
            "finished": self.finished,
            "seconds": dict(self.seconds),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Round:
        return cls(
            op=d["op"],
            round=d["round"],
            base_round=d["base_round"],
            decision=d["decision"],
            reason=d["reason"],
            next=d.get("next", ""),
            goal=d.get("goal", d.get("target", "")),  # "target" in histories written before it was renamed
            diagnosis=Diagnosis.from_json(d["diagnosis"]) if d.get("diagnosis") else None,
            rewrite=Rewrite.from_json(d["rewrite"]) if d.get("rewrite") else None,
            validation=Validation.from_json(d["validation"]) if d.get("validation") else None,
            speedup=d.get("speedup"),
            speedup_initial=d.get("speedup_initial"),
            artifacts=dict(d.get("artifacts", {})),
            started=d.get("started", ""),
            finished=d.get("finished", ""),
            seconds=dict(d.get("seconds", {})),
        )


_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE rounds (
    op TEXT NOT NULL,
    round INTEGER NOT NULL,
    decision TEXT NOT NULL,
    level TEXT,
    family TEXT,
    speedup REAL,
    speedup_initial REAL,
    finished TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (op, round)
);
"""


class History:
    """The rounds of every operator in one run directory (`DIR/history.sqlite`)."""

    FILE = "history.sqlite"

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.is_dir() or self.path.suffix != ".sqlite":
            self.path = self.path / self.FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None)  # explicit transactions below
        # Jobs opening one history at once take turns setting it up: switching a new file to WAL and creating
        # the schema both need it alone, and SQLite's busy handler does not wait for the journal-mode switch.
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._db.execute("PRAGMA busy_timeout=10000")
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
                self._migrate()
            except sqlite3.DatabaseError as e:
                self._db.close()
                raise HistoryError(f"{self.path} is not a readable ladder history: {e}") from e

    def _migrate(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")  # statements one by one: executescript would commit early
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                tables = self._db.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
                if tables:
                    raise HistoryError(f"{self.path} holds tables but no ladder schema version: not a ladder history")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.execute("INSERT INTO meta VALUES ('format', 'ladder-history')")
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            elif version > SCHEMA_VERSION:
                raise HistoryError(
                    f"{self.path} has history schema {version}; this ladder reads up to {SCHEMA_VERSION}: "
                    "upgrade irscope"
                )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def commit(self, rnd: Round) -> None:
        """Record a finished round in one transaction; a second record of the same (op, round) is an error."""
        row = (
            rnd.op,
            rnd.round,
            rnd.decision,
            rnd.level,
            rnd.rewrite.family if rnd.rewrite else None,
            rnd.speedup,
            rnd.speedup_initial,
            rnd.finished,
            json.dumps(rnd.to_json()),
        )
        try:
            with self._db:  # BEGIN … COMMIT, ROLLBACK on error
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute("INSERT INTO rounds VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        except sqlite3.IntegrityError as e:
            raise HistoryError(f"{rnd.op} round {rnd.round} is already recorded in {self.path}") from e

    def ops(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT op FROM rounds ORDER BY op")]

    def rounds(self, op: str | None = None) -> list[Round]:
        q = "SELECT op, round, record FROM rounds" + (" WHERE op = ?" if op else "") + " ORDER BY op, round"
        return [self._load(o, n, rec) for o, n, rec in self._db.execute(q, (op,) if op else ())]

    def get(self, op: str, number: int) -> Round | None:
        row = self._db.execute(
            "SELECT op, round, record FROM rounds WHERE op = ? AND round = ?", (op, number)
        ).fetchone()
        return self._load(*row) if row else None

    def next_round(self, op: str) -> int:
        n = self._db.execute("SELECT max(round) FROM rounds WHERE op = ?", (op,)).fetchone()[0]
        return 0 if n is None else n + 1

    def best(self, op: str) -> Round | None:
        """The best round: highest validated geo-mean speedup over the initial kernel, earlier round on ties, among
        the kernels the run kept (the baseline and accepted rounds). A rejected candidate can still be faster than
        the initial kernel (within the noise margin of its base, say); it is never the best, nor a later base."""
        row = self._db.execute(
            "SELECT op, round, record FROM rounds WHERE op = ? AND speedup_initial IS NOT NULL "
            "AND decision IN (?, ?) ORDER BY speedup_initial DESC, round ASC LIMIT 1",
            (op, BASELINE, ACCEPTED),
        ).fetchone()
        return self._load(*row) if row else None

    def _load(self, op: str, number: int, record: str) -> Round:
        try:
            return Round.from_json(json.loads(record))
        except (ValueError, KeyError, TypeError) as e:
            raise HistoryError(f"{self.path}: the record of {op} round {number} is unreadable: {e}") from e
