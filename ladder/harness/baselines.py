"""The frozen initial kernels' baselines, kept across runs: their validation and their times, and eager's and
torch.compile's on the same cases, measured once per machine and software stack rather than in every run.

A baseline is keyed on everything that could change its figures: the operator, the initial kernel's source (its
hash), the cases' shapes, the GPU, its driver, torch, Triton, the timing settings and whether torch.compile was
timed. A key that differs in any of these is another baseline; nothing is ever reused across a change. The store is
one JSON file (default: `$XDG_CACHE_HOME/irscope/baselines.json`), rewritten atomically per entry; `--baseline-cache
none` keeps none.

Only trusted code is cached: the operator's own initial kernel and PyTorch's references, never a candidate's
figure. A candidate's round then times the candidate alone and takes the references from here
(docs/suite-protocol.md#timing).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suite.operator import Operator

FORMAT = "irscope.ladder.baselines/1"


def default_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "irscope" / "baselines.json"


@dataclass(frozen=True)
class BaselineKey:
    operator: str
    kernel: str  # sha256 of the initial kernel's source
    cases: str  # the case labels (shapes), in order
    environment: str  # GPU, driver, torch, Triton
    settings: str  # timing settings and torch.compile, as JSON

    @classmethod
    def of(cls, op: Operator, environment: dict[str, Any], settings: dict[str, Any]) -> BaselineKey:
        env = {k: environment.get(k) for k in ("gpu", "driver", "torch", "triton", "cuda_runtime")}
        return cls(
            op.name,
            hashlib.sha256(op.initial_source().encode()).hexdigest(),
            ";".join(c.label() for c in op.cases),
            json.dumps(env, sort_keys=True),
            json.dumps(settings, sort_keys=True),
        )

    def text(self) -> str:
        return json.dumps([self.operator, self.kernel, self.cases, self.environment, self.settings])


class BaselineCache:
    """Thread-safe; `path` None keeps entries in memory only (this process)."""

    def __init__(self, path: Path | None):
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[str, dict] = {}
        if path is not None and path.is_file():
            try:
                doc = json.loads(path.read_text())
                if doc.get("format") == FORMAT:
                    self._entries = dict(doc.get("entries") or {})
            except (OSError, ValueError):
                self._entries = {}  # a damaged cache is an empty one: baselines are measured again

    def get(self, key: BaselineKey) -> dict | None:
        with self._lock:
            entry = self._entries.get(key.text())
        return json.loads(json.dumps(entry)) if entry is not None else None

    def put(self, key: BaselineKey, entry: dict) -> None:
        with self._lock:
            self._entries[key.text()] = entry
            if self.path is None:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"format": FORMAT, "entries": self._entries}, indent=1))
            tmp.replace(self.path)
