"""The evaluation cases (cases.yaml, the held-out holdout.yaml and unseen.yaml) as data, and their compiles through
irscope."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

import irscope
from irscope.capture.loader import load_kernel
from irscope.trajectory import Trajectory

HERE = Path(__file__).parent
CASES_FILE = HERE / "cases.yaml"
HOLDOUT_FILE = HERE / "holdout.yaml"  # written apart from the ladder's rules and from cases.yaml's kernels
UNSEEN_FILE = HERE / "unseen.yaml"  # the same, by someone who never read the rules; `new:` symptoms (issue #27)
FRESH_FILE = HERE / "fresh.yaml"  # the same again, after the ladder learned from unseen.yaml (issue #27, item 7)
NEW = "new:"  # a symptom docs/hazards.md does not have yet: checked by test_unseen.py, not by the signatures
NONE = "none"


@dataclass(frozen=True)
class Expect:
    symptom: str
    why: str
    line: int | None = None
    l4: dict[str, str] | None = None
    family: str | None = None
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    kernel: str  # FILE.py:NAME, FILE relative to the cases file
    args: dict[str, Any]
    constexprs: dict[str, Any]
    num_warps: int
    num_stages: int
    target: str
    expect: Expect
    fixed_by: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        stem = Path(self.kernel.split(":")[0]).stem
        return f"{stem}-{self.expect.symptom}"

    def with_overrides(self, overrides: dict[str, Any]) -> Case:
        """The same case with `fixed_by`-style overrides of arguments, constexprs or launch options."""
        return Case(
            self.kernel,
            {**self.args, **overrides.get("args", {})},
            {**self.constexprs, **overrides.get("constexprs", {})},
            overrides.get("num_warps", self.num_warps),
            overrides.get("num_stages", self.num_stages),
            self.target,
            self.expect,
        )

    def compile(self) -> Trajectory:
        path, _, name = self.kernel.rpartition(":")
        kernel = load_kernel(f"{HERE / path}:{name}")
        return irscope.capture(
            kernel,
            target=self.target,
            kernel_kwargs={**self.args, **self.constexprs},
            num_warps=self.num_warps,
            num_stages=self.num_stages,
        )


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    data = yaml.safe_load(path.read_text())
    out = []
    for raw in data["cases"]:
        exp = raw["expect"]
        expect = Expect(
            symptom=exp["symptom"],
            why=exp["why"],
            line=exp.get("line"),
            l4=exp.get("l4"),
            family=exp.get("family"),
            also=tuple(exp.get("also", ())),
        )
        out.append(
            Case(
                raw["kernel"],
                raw.get("args", {}),
                raw.get("constexprs", {}),
                raw["num_warps"],
                raw["num_stages"],
                raw["target"],
                expect,
                raw.get("fixed_by", {}),
            )
        )
    return out
