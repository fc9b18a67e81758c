"""A tuning search inside one offline round: the tune_search applier's static space, compiled for the target
on the CPU (ladder.tune_compile), pruned by what the compiles show, and the survivors handed to the autotuner,
which times them on the GPU per shape in one batch when the harness runs the candidate.

The round's record says how many configs were compiled, pruned (and why) and left for timing. A search is
deterministic for a base kernel, so the operator's directory keeps a small map (tune-searches.json) from the
static space's digest to the searched candidate's: a later round skips a space it already searched instead of
compiling it again.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ladder.context import digest
from ladder.rewriters.base import RewriteRequest
from ladder.tune_compile import ConfigCompile, compile_configs, prune
from patterns.appliers import Candidate
from patterns.appliers.tune_search import tune_module

SEARCHES_FILE = "tune-searches.json"


@dataclass
class Search:
    candidate: Candidate  # the autotuned module over the kept configs
    compiled: list[ConfigCompile]
    kept: list[ConfigCompile]

    def summary(self) -> str:
        reasons = Counter(r.pruned.split(":")[0] for r in self.compiled if r.pruned)
        why = ", ".join(f"{n} {what}" for what, n in reasons.most_common())
        return (
            f"{len(self.compiled)} configs compiled for the target, {len(self.compiled) - len(self.kept)} pruned"
            f"{f' ({why})' if why else ''}, {len(self.kept)} left for the autotuner to time on the GPU"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "compiled": len(self.compiled),
            "pruned": len(self.compiled) - len(self.kept),
            "timed": len(self.kept),
            "configs": [r.to_json() for r in self.compiled],
        }


class Searches:
    """The operator's map from a static space's digest to its searched candidate's digest."""

    def __init__(self, path: Path):
        self.path = path
        self.done: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}

    def tried(self, cand: Candidate, tried: set[str]) -> bool:
        return self.done.get(digest(cand.source)) in tried

    def remember(self, space: Candidate, searched: str) -> None:
        self.done[digest(space.source)] = digest(searched)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.done, indent=1))
        tmp.replace(self.path)


def run_search(request: RewriteRequest, cand: Candidate, searches: Searches, max_configs: int) -> Search | str:
    """The searched candidate, or why there is none (every config but the base's own was pruned). The first
    `max_configs` of the static space are compiled (it is ordered: the base's config, then the likeliest)."""
    kernel, space = cand.params["kernel"], cand.params["space"][:max_configs]
    compiled = compile_configs(request.base_source, kernel, space, request.op, request.workdir / "tune")
    kept, _ = prune(compiled)
    if not kept:
        first = next((r.error for r in compiled if r.error), "no error given")
        return f"tuning search on {kernel}: no config compiled ({len(compiled)} tried; the first error: {first[:300]})"
    if [r.config for r in kept] == space[:1]:
        return f"tuning search on {kernel}: every config but the base's own was pruned"
    source = tune_module(request.base_source, kernel, [r.config for r in kept])
    searches.remember(cand, source)
    search = Search(cand, compiled, kept)
    params = {**cand.params, "space": [r.config for r in kept], "compiled": len(compiled)}
    search.candidate = replace(
        cand, description=f"{cand.description}; {search.summary()}", source=source, params=params
    )
    return search
