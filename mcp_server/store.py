"""Trajectories as the tools name them: a name under the workspace's store (what `capture` wrote), or any
workspace directory holding a trajectory. Loaded ones are kept (a few, keyed by their trajectory.json's mtime) with
the report model and stage-diff graph built on first use, so a session of queries parses each IR once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from irscope.report.model import ReportModel, build_model
from irscope.store import JOURNAL, TrajectoryFormatError, load
from irscope.trajectory import Trajectory
from mcp_server.workspace import NAME, Workspace, WorkspaceError

KEPT = 8  # trajectories held in memory


@dataclass
class Loaded:
    name: str
    path: Path
    traj: Trajectory
    lock: threading.RLock  # the store's: held while the model, graph and analyzer caches are read or built

    @cached_property
    def model(self) -> ReportModel:
        return build_model(self.traj)


class TrajectoryStore:
    def __init__(self, ws: Workspace):
        self.ws = ws
        self._lock = threading.Lock()
        # one lock for every computation on loaded trajectories: a diff holds two at once, in no fixed order
        self._compute = threading.RLock()
        self._kept: OrderedDict[Path, tuple[float, Loaded]] = OrderedDict()

    def locate(self, ref: str) -> Path:
        """The directory `ref` names: a stored trajectory's name, else a workspace path."""
        if NAME.match(ref) and (self.ws.trajectories / ref).is_dir():
            return self.ws.trajectories / ref
        try:
            return self.ws.path(ref, kind="dir")
        except WorkspaceError as e:
            if "no such" in str(e):
                raise WorkspaceError(
                    f"trajectory {ref!r}: no stored trajectory of that name and no such directory; "
                    "list_trajectories names them"
                ) from None
            raise

    def name_of(self, path: Path) -> str:
        return path.name if path.parent == self.ws.trajectories else self.ws.relative(path)

    def get(self, ref: str) -> Loaded:
        path = self.locate(ref)
        doc = path / "trajectory.json"
        stamp = (
            doc.stat().st_mtime
            if doc.exists()
            else (path / JOURNAL).stat().st_mtime
            if (path / JOURNAL).exists()
            else 0.0
        )
        with self._lock:
            hit = self._kept.get(path)
            if hit is not None and hit[0] == stamp:
                self._kept.move_to_end(path)
                return hit[1]
        traj = load(path)
        self._check_files(traj, path)
        loaded = Loaded(self.name_of(path), path, traj, self._compute)
        with self._lock:
            self._kept[path] = (stamp, loaded)
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        return loaded

    @staticmethod
    def _check_files(traj: Trajectory, root: Path) -> None:
        """A trajectory.json is data from the workspace: its IR and artifact files must lie inside its directory."""
        inside = root.resolve()
        for rel in [s.ir_file for s in traj.snapshots] + [a.file for a in traj.artifacts.values()]:
            if rel and not (inside / rel).resolve().is_relative_to(inside):
                raise TrajectoryFormatError(f"{root.name}: file {rel!r} lies outside the trajectory directory")

    def names(self) -> list[Path]:
        """Stored trajectories, oldest first."""
        dirs = [d for d in self.ws.trajectories.iterdir() if d.is_dir()]
        return sorted(dirs, key=lambda d: (d.stat().st_mtime, d.name))
