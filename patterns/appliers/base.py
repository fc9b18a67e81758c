"""What a mechanical applier is: it detects its pattern in a kernel module and yields rewritten modules."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from patterns.appliers.source import SourceModule


@dataclass(frozen=True)
class Candidate:
    applier: str
    card: str  # the pattern card the rewrite implements
    description: str  # what changed, with source lines, for the round record
    source: str  # the whole candidate module
    params: dict[str, Any] = field(default_factory=dict)  # the knob values chosen, e.g. {"BLOCK": 1024}

    def to_json(self) -> dict[str, Any]:
        return {"applier": self.applier, "card": self.card, "description": self.description, "params": self.params}


class Applier(ABC):
    """A source transform. `applies` detects the pattern (never a list of kernel names); `candidates` rewrites."""

    name: str
    card: str
    summary: str

    @abstractmethod
    def applies(self, mod: SourceModule) -> bool: ...

    def why_not(self, mod: SourceModule) -> str | None:
        """Why the applier does not apply to this module (None when it does): the round record's reason. Appliers
        override it to name the precondition that failed and where."""
        return None if self.applies(mod) else f"{self.name}: its pattern ({self.summary}) is not in this kernel"

    @abstractmethod
    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]: ...
