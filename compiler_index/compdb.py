"""Compilation databases (`compile_commands.json`): which files the libclang backend parses, with which flags.

CMake writes one with `-DCMAKE_EXPORT_COMPILE_COMMANDS=ON`: a JSON list of `{"directory", "file", "arguments" |
"command", "output"?}`. Each entry becomes the flags libclang needs for that file: the compiler, the input file, `-c`,
`-o …` and dependency-file options (`-MD -MF …`, which would make libclang write files) are dropped, and
`-working-directory` is added so that relative `-I` paths resolve as they did in the build.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from compiler_index.sources import Root, SourceError

FILENAME = "compile_commands.json"
# where a source root may hold one: the root itself (often a symlink to the build's) or a build directory in it
SEARCH = (FILENAME, f"build/{FILENAME}")

_DROP_WITH_VALUE = frozenset({"-o", "-MF", "-MT", "-MQ"})
_DROP = frozenset({"-c", "-M", "-MM", "-MD", "-MMD", "-MP", "-MG", "--"})


class CompileCommandsError(SourceError):
    """A compilation database that cannot be read, or none where one is needed."""


@dataclass(frozen=True)
class CompileCommand:
    file: str  # absolute path of the translation unit
    directory: str  # where the compiler ran
    arguments: tuple[str, ...]  # flags for libclang (no compiler, input, -c, -o, -M…), -working-directory first

    def key(self) -> str:
        """What the facts of this file depend on besides its content and its headers."""
        return json.dumps([self.directory, list(self.arguments)])


def find(roots: list[Root], explicit: str | Path | None = None) -> Path | None:
    """The compilation database to use: `explicit` (a file, or a directory holding one), else the first found in a
    source root."""
    if explicit is not None:
        p = Path(explicit).expanduser().resolve()
        p = p / FILENAME if p.is_dir() else p
        if not p.is_file():
            raise CompileCommandsError(
                f"no compilation database at {explicit}; produce one with `cmake "
                "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON …` (it lands in the build directory)"
            )
        return p
    for root in roots:
        if root.kind != "source":
            continue
        for rel in SEARCH:
            if (root.path / rel).is_file():
                return (root.path / rel).resolve()
    return None


def load(path: Path) -> dict[Path, CompileCommand]:
    """Commands by the absolute, resolved path of their file; a file listed twice keeps its first command."""
    try:
        entries = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CompileCommandsError(f"{path}: not a readable compilation database ({err})") from None
    if not isinstance(entries, list):
        raise CompileCommandsError(
            f"{path}: a compilation database is a JSON list of commands, found {type(entries).__name__}"
        )
    out: dict[Path, CompileCommand] = {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or not isinstance(e.get("file"), str) or not isinstance(e.get("directory"), str):
            raise CompileCommandsError(f'{path}: entry {i} lacks a "file" or "directory" string')
        args = e.get("arguments")
        if args is None and isinstance(e.get("command"), str):
            args = shlex.split(e["command"])
        if not isinstance(args, list) or not args or not all(isinstance(a, str) for a in args):
            raise CompileCommandsError(f'{path}: entry {i} ({e["file"]}) has neither "arguments" nor "command"')
        directory = Path(e["directory"])
        file = (directory / e["file"]).resolve()
        out.setdefault(file, CompileCommand(str(file), str(directory), _flags(args[1:], directory, file)))
    return out


def _flags(args: list[str], directory: Path, file: Path) -> tuple[str, ...]:
    out = ["-working-directory", str(directory)]
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in _DROP_WITH_VALUE:
            skip = True
        elif a in _DROP or (a.startswith("-o") and len(a) > 2) or a.startswith(("-MF", "-MT", "-MQ")):
            continue
        elif not a.startswith("-") and (directory / a).resolve() == file:
            continue  # the input file; libclang gets it separately
        else:
            out.append(a)
    return tuple(out)
