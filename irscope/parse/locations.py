"""MLIR locations → Python source frames: `#loc` aliases, name locs, `callsite(callee at caller)`, `fused[…]`.

A resolved Location keeps every frame, innermost (callee) first, so the caller's line of an inlined `tl.*`
helper is known: `user_frame` picks the innermost frame in the user's code, not triton/language/standard.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import triton

TRITON_DIR = str(Path(triton.__file__).resolve().parent)


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    @cached_property
    def in_triton(self) -> bool:
        # the folder and a separator: triton_kernels, installed beside triton, is not Triton's own code
        return self.file.startswith(TRITON_DIR + "/") or "/triton/language/" in self.file


@dataclass(frozen=True)
class Location:
    frames: tuple[Frame, ...] = ()  # innermost first
    name: str | None = None  # the innermost name loc ("offs", "acc", …)

    @property
    def known(self) -> bool:
        return bool(self.frames)

    def user_frame(self, source_file: str | None = None) -> Frame | None:
        """The innermost frame in `source_file` (the kernel's file); else the innermost outside Triton."""
        if source_file is not None:
            for f in self.frames:
                if f.file == source_file:
                    return f
        for f in self.frames:
            if not f.in_triton:
                return f
        return None


UNKNOWN = Location()
_FILELOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')
_ALIAS_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$", re.M)


class LocationTable:
    """Resolves location bodies (the text inside `loc(...)`) against a module's `#loc` alias definitions."""

    def __init__(self, text: str):
        self._raw: dict[str, str] = {m.group(1): m.group(2) for m in _ALIAS_DEF.finditer(text)}
        self._cache: dict[str, Location] = {}

    def __len__(self) -> int:
        return len(self._raw)

    def resolve(self, body: str | None) -> Location:
        if not body:
            return UNKNOWN
        hit = self._cache.get(body)
        if hit is None:
            hit = self._parse(body.strip(), depth=0)
            self._cache[body] = hit
        return hit

    def _parse(self, s: str, depth: int) -> Location:
        if depth > 64:
            return UNKNOWN  # a cyclic or absurdly deep alias chain: refuse rather than recurse forever
        if s.startswith("#loc"):
            raw = self._raw.get(s)
            return self._parse(raw, depth + 1) if raw is not None else UNKNOWN
        if s.startswith("loc(") and s.endswith(")"):
            return self._parse(s[4:-1], depth + 1)
        if s == "unknown":
            return UNKNOWN
        if s.startswith("callsite("):
            inner = s[len("callsite(") : -1]
            callee, caller = _split_at(inner)
            a, b = self._parse(callee, depth + 1), self._parse(caller, depth + 1)
            return Location(a.frames + b.frames, a.name or b.name)
        if s.startswith("fused"):
            body = s[len("fused") :].lstrip()
            if body.startswith("<"):  # metadata, e.g. an inline #llvm.di_subprogram<… distinct[0]<> …>: skip it whole
                body = body[_close(body) + 1 :].lstrip()
            parts = _split_top(body[1:-1]) if body.startswith("[") and body.endswith("]") else []
            frames: list[Frame] = []
            name = None
            for p in parts:
                loc = self._parse(p, depth + 1)
                frames.extend(f for f in loc.frames if f not in frames)
                name = name or loc.name
            return Location(tuple(frames), name)
        if s.startswith('"'):
            m = _FILELOC.match(s)
            if m and (m.end() == len(s) or s[m.end() :].lstrip().startswith("to")):
                return Location((Frame(m.group(1), int(m.group(2)), int(m.group(3))),))
            # name loc: "name"(child) or "name"
            end = _string_end(s)
            name = s[1:end]
            rest = s[end + 1 :].strip()
            if rest.startswith("(") and rest.endswith(")"):
                child = self._parse(rest[1:-1], depth + 1)
                return Location(child.frames, name)
            return Location((), name)
        return UNKNOWN


def _string_end(s: str) -> int:
    i = 1
    while i < len(s):
        if s[i] == "\\":
            i += 2
            continue
        if s[i] == '"':
            return i
        i += 1
    return len(s) - 1


def _close(s: str) -> int:
    """Index of the bracket closing the one `s` opens, skipping strings (len(s) - 1 when unbalanced)."""
    depth, i = 0, 0
    while i < len(s):
        c = s[i]
        if c == '"':
            i += _string_end(s[i:]) + 1
            continue
        if c in "([<":
            depth += 1
        elif c in ")]>":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(s) - 1


def _split_top(s: str) -> list[str]:
    """Split on commas outside parentheses, brackets and strings."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(s):
        c = s[i]
        if c == '"':
            j = _string_end(s[i:]) + i
            cur.append(s[i : j + 1])
            i = j + 1
            continue
        if c in "([<":
            depth += 1
        elif c in ")]>":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _split_at(s: str) -> tuple[str, str]:
    """`A at B` with A and B possibly nested: split on the top-level ' at '."""
    depth, i = 0, 0
    while i < len(s):
        c = s[i]
        if c == '"':
            i += _string_end(s[i:]) + 1
            continue
        if c in "([<":
            depth += 1
        elif c in ")]>":
            depth -= 1
        elif depth == 0 and s.startswith(" at ", i):
            return s[:i], s[i + 4 :]
        i += 1
    return s, "unknown"
