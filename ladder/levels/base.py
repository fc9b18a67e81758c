"""A ladder level: gathers evidence for one question; the policy decides whether the ladder may stop there."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from ladder.context import Context
from ladder.evidence import FAILED, LEVEL_NAMES, LevelResult
from ladder.policy import assess


class Level(ABC):
    """Subclasses set `name` (L1..L4) and implement `gather`; `run` adds the stop tests (ladder/policy.py).

    `gather` returns status "unavailable" with a reason when the level cannot run here (L2 without a GPU and
    without timings), rather than guessing. An exception inside `gather` becomes a "failed" result so one
    broken level does not end a long run; its message is kept in the round record.
    """

    name: ClassVar[str]

    @abstractmethod
    def gather(self, ctx: Context) -> LevelResult: ...
    def run(self, ctx: Context) -> LevelResult:
        try:
            result = self.gather(ctx)
        except Exception as e:  # the record keeps the message; the ladder climbs on
            result = LevelResult(self.name, FAILED, f"{type(e).__name__}: {e}")
        if result.level != self.name:
            raise ValueError(f"{type(self).__name__} is registered as {self.name} but returned a {result.level} result")
        return assess(result, ctx)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if getattr(cls, "name", None) not in LEVEL_NAMES:
            raise TypeError(f"{cls.__name__}.name must be one of {', '.join(LEVEL_NAMES)}")
