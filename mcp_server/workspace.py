"""The workspace: the one directory the server reads and writes. Every path an agent gives is resolved (symlinks
followed, `..` collapsed) and must land inside it; what the server itself writes goes under STATE_DIR."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

STATE_DIR = ".irscope-mcp"
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


class WorkspaceError(ValueError):
    """A path outside the workspace, missing, or of the wrong kind; the message says which and why."""


@dataclass(frozen=True)
class Workspace:
    root: Path  # resolved

    @classmethod
    def open(cls, root: str | Path) -> Workspace:
        path = Path(root).expanduser().resolve()
        if not path.is_dir():
            raise WorkspaceError(f"workspace {root}: not a directory")
        return cls(path)

    def path(self, given: str, *, kind: str | None = None, must_exist: bool = True) -> Path:
        """`given` (relative to the root, or absolute) resolved; WorkspaceError unless it is inside the root and,
        with `must_exist`, exists and is a `kind` ("file" or "dir")."""
        if not given or "\x00" in given:
            raise WorkspaceError("empty path: give a path inside the workspace")
        resolved = (self.root / Path(given).expanduser()).resolve()  # an absolute `given` replaces the root
        if not resolved.is_relative_to(self.root):
            raise WorkspaceError(
                f"{given}: resolves outside the workspace {self.root}; only paths inside it are read or written"
            )
        if must_exist:
            if not resolved.exists():
                raise WorkspaceError(f"{given}: no such file or directory in the workspace")
            if kind == "file" and not resolved.is_file():
                raise WorkspaceError(f"{given}: not a file")
            if kind == "dir" and not resolved.is_dir():
                raise WorkspaceError(f"{given}: not a directory")
        return resolved

    def relative(self, path: Path) -> str:
        return str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)

    def state(self, *parts: str) -> Path:
        """A directory the server owns, created on first use."""
        d = self.root.joinpath(STATE_DIR, *parts)
        if not d.resolve().is_relative_to(self.root):  # a symlink planted in the workspace must not redirect writes
            raise WorkspaceError(f"{self.relative(d)}: resolves outside the workspace {self.root}; remove that link")
        d.mkdir(parents=True, exist_ok=True)
        return d

    @property
    def trajectories(self) -> Path:
        return self.state("trajectories")

    @property
    def home(self) -> Path:
        """HOME and TMPDIR of the children (Triton's cache persists there between captures)."""
        return self.state("home")

    def fresh(self, area: str, name: str) -> Path:
        """A new directory STATE_DIR/area/name (or name-2, name-3, … when taken)."""
        check_name(name)
        base = self.state(area)
        for n in range(1, 10_000):
            d = base / (name if n == 1 else f"{name}-{n}")
            try:
                d.mkdir()
            except FileExistsError:
                continue
            return d
        raise WorkspaceError(f"{area}/{name}: too many directories of that name; remove some")


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise WorkspaceError(f"name {name!r}: use 1-64 letters, digits, '_', '.', '-' (not starting with '.' or '-')")
    return name
