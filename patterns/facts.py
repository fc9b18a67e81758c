"""What is known about a kernel, as cards are matched against it (KernelFacts): counters, L2 facts, source
features, specialization and target.

Names are those of the predicate language (docs/patterns.md): `ttir.compute.reduce_index`, `res.spill_bytes`,
`l2.sol_fraction`, `src.uses_argmax`, `spec.num_warps`, `target.arch`. A name with no value is unknown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patterns.features import extract
from patterns.names import COUNTERS, STAGES
from patterns.predicate import Value


class FactsError(ValueError):
    """Facts that cannot be read (a missing file, a malformed profile)."""


@dataclass(frozen=True)
class FactLocation:
    """Where a fact shows: an IR stage and pass, a line of the kernel's Python source."""

    stage: str | None = None
    pass_arg: str | None = None
    line: int | None = None
    file: str | None = None
    count: float | None = None  # the counter's value at this place, when per-line

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    def __str__(self) -> str:
        parts = []
        if self.stage:
            if self.pass_arg == "<input>":
                parts.append(f"{self.stage} (stage input)")
            else:
                parts.append(self.stage + (f" after {self.pass_arg}" if self.pass_arg else ""))
        if self.line is not None:
            parts.append(f"{Path(self.file).name if self.file else 'line'}:{self.line}")
        if self.count is not None:
            parts.append(f"×{self.count:g}")
        return " ".join(parts)


@dataclass
class KernelFacts:
    counters: dict[str, float] = field(default_factory=dict)  # STAGE.group.name and res.name (docs/signatures.md)
    l2: dict[str, Any] = field(default_factory=dict)  # L2 facts by name (patterns.names.L2_FACTS)
    source_features: dict[str, bool | int] = field(default_factory=dict)  # patterns.features.FEATURES
    spec: dict[str, Any] = field(default_factory=dict)  # num_warps, num_stages, num_ctas, block_max
    target: dict[str, Any] = field(default_factory=dict)  # backend, arch, warp_size
    locations: dict[str, list[FactLocation]] = field(default_factory=dict)  # fact name → where it shows
    provenance: dict[str, str] = field(default_factory=dict)  # source, kernel, trajectory, profile

    def get(self, name: str) -> Value:
        head, _, rest = name.partition(".")
        if head in STAGES or head == "res":
            v = self.counters.get(name)
        elif head == "src":
            v = self.source_features.get(rest)
        elif head == "l2":
            v = self.l2.get(rest)
        elif head == "spec":
            v = self.spec.get(rest)
        elif head == "target":
            v = self.target.get(rest)
        else:
            v = None
        return v if isinstance(v, bool | int | float | str) or v is None else str(v)

    def where(self, name: str) -> list[FactLocation]:
        return self.locations.get(name, [])

    def merge(self, other: KernelFacts) -> KernelFacts:
        """A new KernelFacts: `other`'s values win where both have one."""
        locs = {k: list(v) for k, v in self.locations.items()}
        for k, v in other.locations.items():
            locs[k] = v
        return KernelFacts(
            {**self.counters, **other.counters},
            {**self.l2, **other.l2},
            {**self.source_features, **other.source_features},
            {**self.spec, **other.spec},
            {**self.target, **other.target},
            locs,
            {**self.provenance, **other.provenance},
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "counters": self.counters,
            "l2": self.l2,
            "source_features": self.source_features,
            "spec": self.spec,
            "target": self.target,
            "locations": {k: [x.to_json() for x in v] for k, v in self.locations.items()},
            "provenance": self.provenance,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> KernelFacts:
        unknown = sorted(set(d) - {"counters", "l2", "source_features", "spec", "target", "locations", "provenance"})
        if unknown:
            raise FactsError(f"unknown evidence field(s) {', '.join(unknown)}")
        locs = {k: [FactLocation(**x) for x in v] for k, v in d.get("locations", {}).items()}
        return cls(
            dict(d.get("counters", {})),
            dict(d.get("l2", {})),
            dict(d.get("source_features", {})),
            dict(d.get("spec", {})),
            dict(d.get("target", {})),
            locs,
            dict(d.get("provenance", {})),
        )

    # --- builders ------------------------------------------------------------------------------------------

    @classmethod
    def from_source(
        cls, source: str, path: str | None = None, kernel: str | None = None, constexprs: dict[str, Any] | None = None
    ) -> KernelFacts:
        """Source features of a kernel module (one kernel and its helpers when `kernel` is given)."""
        feats = extract(source, constexprs=constexprs, filename=path or "<kernel>", kernel=kernel)
        locs = {
            f"src.{k}": [FactLocation(line=ln, file=path) for ln in lines] for k, lines in feats.lines.items() if lines
        }
        prov = {"source": path or "<text>"}
        if kernel:
            prov["kernel"] = kernel
        return cls(source_features=dict(feats.values), locations=locs, provenance=prov)

    @classmethod
    def from_source_file(cls, path: str | Path, kernel: str | None = None) -> KernelFacts:
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as e:
            raise FactsError(f"cannot read kernel source {p}: {e}") from e
        return cls.from_source(text, str(p), kernel)

    @classmethod
    def from_trajectory(cls, traj: Any, passes: bool = True) -> KernelFacts:
        """Counters (irscope.signatures.summary), where they show (per source line; with `passes`, the pass that
        raised each one, from the stage-diff graph), the specialization, the target and the source features of
        the captured kernel. `traj`: a Trajectory or a trajectory directory.

        The summary omits zero counts; a counter the backend measures on a stage that was captured reads 0 here,
        so `ttgir.mem.cp_async == 0` is a fact, not unknown."""
        import irscope
        from irscope import graph, signatures

        if isinstance(traj, str | Path):
            try:
                traj = irscope.load(traj)
            except (OSError, ValueError, KeyError) as e:
                raise FactsError(f"cannot load trajectory {traj}: {e}") from e
        analyzer = signatures.Analyzer(traj)
        counters = {k: float(v) for k, v in signatures.summary(traj, analyzer).items()}
        measured = set(signatures.counter_names(traj.target.backend))
        stages = set(analyzer.stage_signatures())
        for counter, on in COUNTERS.items():
            for stage in on:
                if stage in stages and counter in measured:
                    counters.setdefault(f"{stage}.{counter}", 0.0)
        locs: dict[str, list[FactLocation]] = {}
        src_file = traj.kernel.source_file
        if passes:
            g = graph.build(traj, analyzer)
            for name, value in counters.items():
                stage, _, counter = name.partition(".")
                if value and stage in STAGES and stage != "sass":
                    locs.setdefault(name, []).extend(_raised_by(g, traj, stage, counter))
        for stage, per_line in signatures.by_line(traj, analyzer).items():
            for line, counts in sorted(per_line.items()):
                for counter, n in counts.items():
                    if n and line != signatures.UNATTRIBUTED:
                        locs.setdefault(f"{stage}.{counter}", []).append(
                            FactLocation(stage=stage, line=int(line), file=src_file, count=float(n))
                        )
        spec = traj.specialization
        consts = {k: v for k, v in spec.constexprs.items() if isinstance(v, int) and not isinstance(v, bool)}
        blocks = [v for k, v in consts.items() if "BLOCK" in k.upper()]
        spec_facts: dict[str, Any] = {
            k: spec.options[k] for k in ("num_warps", "num_stages", "num_ctas") if isinstance(spec.options.get(k), int)
        }
        if blocks:
            spec_facts["block_max"] = max(blocks)
        spec_facts.update(_alignment_facts(spec.signature, spec.attrs))
        ev = cls(
            counters=counters,
            spec=spec_facts,
            target=traj.target.to_json(),
            locations=locs,
            provenance={"trajectory": str(traj.root) if traj.root else "<memory>", "kernel": traj.kernel.name},
        )
        if traj.kernel.source:
            ev = ev.merge(cls.from_source(traj.kernel.source, src_file, traj.kernel.name, consts))
        return ev

    @classmethod
    def from_profile(cls, path: str | Path) -> KernelFacts:
        """L2 facts from a profile JSON: `{"l2": {...}, "target": {...}}` or a flat mapping of L2 facts."""
        p = Path(path)
        try:
            data = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise FactsError(f"cannot read profile {p}: {e}") from e
        if not isinstance(data, dict):
            raise FactsError(f"{p}: a profile must be a JSON object of L2 facts")
        l2 = data.get("l2", data if "l2" not in data else {})
        if not isinstance(l2, dict):
            raise FactsError(f"{p}: 'l2' must be an object of facts")
        l2 = {k: v for k, v in l2.items() if k != "target"}
        target = data.get("target", {}) if isinstance(data.get("target", {}), dict) else {}
        return cls(
            l2=l2,
            target=target,
            locations={f"l2.{k}": [FactLocation(file=str(p))] for k in l2},
            provenance={"profile": str(p)},
        )


def _alignment_facts(signature: dict[str, str], attrs: dict[str, list]) -> dict[str, int]:
    """How many integer / pointer arguments lack the JIT's divisible-by-16 specialization (`tt.divisibility`)."""

    def aligned(name: str) -> bool:
        return any(
            isinstance(a, list | tuple) and len(a) == 2 and a[0] == "tt.divisibility" and a[1] >= 16
            for a in attrs.get(name, [])
        )

    ints = [n for n, t in signature.items() if t in ("i32", "i64", "u32", "u64")]
    ptrs = [n for n, t in signature.items() if t.startswith("*")]
    return {
        "int_args_unaligned": sum(not aligned(n) for n in ints),
        "ptr_args_unaligned": sum(not aligned(n) for n in ptrs),
    }


def _raised_by(g: Any, traj: Any, stage: str, counter: str) -> list[FactLocation]:
    """The passes of `stage` that raised `counter`, or the stage's input when it arrived already nonzero."""
    from irscope.trajectory import INPUT_PASS

    raised = [c for c in g.introduced_by(counter) if c.edge.stage == stage]
    if raised:
        return [FactLocation(stage=stage, pass_arg=c.edge.pass_arg, count=float(c.after)) for c in raised]
    first = traj.stage_snapshots(stage)[:1]
    if first and g.value(first[0].index, counter):
        return [FactLocation(stage=stage, pass_arg=INPUT_PASS, count=float(g.value(first[0].index, counter)))]
    return []
