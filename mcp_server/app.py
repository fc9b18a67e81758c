"""What every tool group shares: the workspace, the compiler index's path, the trajectory store, the children's
timeout."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mcp_server.children import DEFAULT_TIMEOUT_S
from mcp_server.store import TrajectoryStore
from mcp_server.workspace import Workspace


@dataclass
class App:
    ws: Workspace
    db: Path  # the compiler index (read only; given at start, may lie outside the workspace)
    store: TrajectoryStore
    timeout_s: float = DEFAULT_TIMEOUT_S

    @classmethod
    def create(cls, workspace: str | Path, db: str | Path, timeout_s: float = DEFAULT_TIMEOUT_S) -> App:
        ws = Workspace.open(workspace)
        return cls(ws, Path(db).expanduser().resolve(), TrajectoryStore(ws), timeout_s)
