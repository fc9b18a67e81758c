"""What every tool group shares: the workspace, the compiler index's path, the trajectory store, the children's
timeout, and the policy of the code-running tools: confined (ladder.confine), or refused where no confinement works
unless the server was started with --unsafe-no-sandbox."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ladder import confine
from mcp_server.children import DEFAULT_TIMEOUT_S
from mcp_server.store import TrajectoryStore
from mcp_server.workspace import Workspace


@dataclass
class App:
    ws: Workspace
    db: Path  # the compiler index (read only; given at start, may lie outside the workspace)
    store: TrajectoryStore
    timeout_s: float = DEFAULT_TIMEOUT_S
    unsafe_no_sandbox: bool = False

    @classmethod
    def create(
        cls,
        workspace: str | Path,
        db: str | Path,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        unsafe_no_sandbox: bool = False,
    ) -> App:
        ws = Workspace.open(workspace)
        return cls(ws, Path(db).expanduser().resolve(), TrajectoryStore(ws), timeout_s, unsafe_no_sandbox)

    def confinement(self) -> confine.Confinement | None:
        """The confinement a code-running tool runs its child in; None only where none works on this machine and
        the server was started with --unsafe-no-sandbox. Otherwise no confinement is SandboxUnavailable, whose
        message the agent gets (probed once per process, on the first code-running call)."""
        confinement = confine.available()
        if confinement is None and not self.unsafe_no_sandbox:
            raise confine.SandboxUnavailable(
                f"cannot confine the kernel's code here ({confine.problem()}); restart the server with "
                "--unsafe-no-sandbox to run it unconfined, as the server's user, with its files and network"
            )
        return confinement
