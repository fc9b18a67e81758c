"""Distilled backend invariants (ladder/data/invariants.yaml): per bottleneck class, what the compiler's source
says causes it, which functions to cite, which conditions decide it, and the rewrite family it leaves."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "invariants.yaml"


@dataclass(frozen=True)
class Anchor:
    symbol: str
    explains: str


@dataclass(frozen=True)
class Invariant:
    bottleneck: str
    source_op: str
    statement: str
    mechanisms: tuple[Anchor, ...]
    gates: tuple[Anchor, ...]
    remarks: tuple[str, ...]
    family: str
    action: str


class InvariantsError(ValueError):
    pass


def load(path: str | Path | None = None) -> tuple[Path, dict[str, Invariant]]:
    p = Path(path) if path else DEFAULT_PATH
    try:
        doc = yaml.safe_load(p.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise InvariantsError(f"{p}: cannot read the invariants file: {e}") from e
    if not isinstance(doc, dict) or doc.get("format") != "irscope-invariants" or doc.get("format_version") != 1:
        raise InvariantsError(f"{p}: not an irscope-invariants file of format_version 1")
    out: dict[str, Invariant] = {}
    for name, d in (doc.get("invariants") or {}).items():
        try:
            out[name] = Invariant(
                bottleneck=name,
                source_op=d["source_op"],
                statement=d["statement"],
                mechanisms=tuple(Anchor(**m) for m in d.get("mechanisms", [])),
                gates=tuple(Anchor(**g) for g in d.get("gates", [])),
                remarks=tuple(d.get("remarks", [])),
                family=d["family"],
                action=d.get("action", ""),
            )
        except (KeyError, TypeError) as e:
            raise InvariantsError(f"{p}: invariant {name!r} is missing or misnames a field: {e}") from e
    return p, out
