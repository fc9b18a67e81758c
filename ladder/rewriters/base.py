"""A rewriter turns a round's evidence packet into one candidate kernel module (LLM or mechanical applier).

Rewriters only produce candidates: they never import or run them. Validation runs candidates in a sandbox.
"""

from __future__ import annotations

import argparse
import difflib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from ladder.context import PastRound
from ladder.policy import Diagnosis
from ladder.records import Rewrite
from ladder.validation import Validation
from suite.operator import Operator


class RewriterUnavailable(RuntimeError):
    """The rewriter cannot be reached or refused the request for good (auth, quota, endpoint down).

    The loop stops on it without recording the round, so a later resume retries that round.
    """


@dataclass(frozen=True)
class RewriteRequest:
    op: Operator
    base_round: int
    base_source: str  # the kernel to rewrite
    base_validation: Validation | None  # its latest validation (timings when measured on a GPU)
    diagnosis: Diagnosis | None  # None when the loop runs without the ladder (ablation)
    history: tuple[PastRound, ...]
    workdir: Path  # where the rewriter may keep its transcript


class Rewriter(ABC):
    @property
    @abstractmethod
    def name(self) -> str:
        """How round records name it, e.g. "llm:gpt-4.1"."""

    @abstractmethod
    def rewrite(self, request: RewriteRequest) -> Rewrite:
        """A Rewrite whose `source` is the candidate module, or "" with the attempts saying why there is none."""

    @classmethod
    @abstractmethod
    def from_args(cls, args: argparse.Namespace) -> Rewriter: ...


def unified_diff(before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), "base.py", "candidate.py"
        )
    )
