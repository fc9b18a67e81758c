"""LLVM IR text → instructions with their source frames (`!dbg` → DILocation → inlinedAt chain → DIFile)."""

from __future__ import annotations

import re

from irscope.parse.asm import Instr
from irscope.parse.locations import Frame

_META = re.compile(r"^(![\d]+) = (?:distinct )?!(DILocation|DISubprogram|DILexicalBlock\w*|DIFile)\((.*)\)\s*$", re.M)
_FIELD = re.compile(r'(\w+): (?:"((?:[^"\\]|\\.)*)"|(![\d]+)|(-?\d+))')
_DBG = re.compile(r"!dbg (![\d]+)")
_OPCODE = re.compile(r"^\s+(?:%[\w.$-]+ = )?(?:tail |musttail |notail )?([a-z][\w.]*)")


class _Metadata:
    def __init__(self, text: str):
        self.nodes: dict[str, tuple[str, dict[str, str]]] = {}
        for m in _META.finditer(text):
            fields = {
                f.group(1): f.group(2) if f.group(2) is not None else (f.group(3) or f.group(4))
                for f in _FIELD.finditer(m.group(3))
            }
            self.nodes[m.group(1)] = (m.group(2), fields)
        self._frames: dict[str, tuple[Frame, ...]] = {}

    def _file_of_scope(self, ref: str | None, depth: int = 0) -> str | None:
        if ref is None or depth > 32 or ref not in self.nodes:
            return None
        kind, fields = self.nodes[ref]
        if kind == "DIFile":
            directory, name = fields.get("directory", ""), fields.get("filename", "")
            return name if name.startswith("/") or not directory else f"{directory}/{name}"
        return self._file_of_scope(fields.get("file"), depth + 1) or self._file_of_scope(fields.get("scope"), depth + 1)

    def frames(self, ref: str, depth: int = 0) -> tuple[Frame, ...]:
        if ref in self._frames:
            return self._frames[ref]
        out: tuple[Frame, ...] = ()
        node = self.nodes.get(ref)
        if node and node[0] == "DILocation" and depth < 64:
            f = node[1]
            file, line = self._file_of_scope(f.get("scope")), int(f.get("line", 0))
            # line 0: code with no source line (as in PTX and AMDGCN `.loc`); the inlinedAt callers still count
            here = (Frame(file, line, int(f.get("column", 0))),) if file and line > 0 else ()
            outer = self.frames(f["inlinedAt"], depth + 1) if f.get("inlinedAt") else ()
            out = here + outer
        self._frames[ref] = out
        return out


def parse_llvm_ir(text: str) -> list[tuple[Instr, tuple[Frame, ...]]]:
    """Instructions of every function body, each with its frames (innermost first; callers follow)."""
    meta = _Metadata(text)
    out: list[tuple[Instr, tuple[Frame, ...]]] = []
    in_body = False
    for i, line in enumerate(text.splitlines(), start=1):
        if line.startswith("define "):
            in_body = True
            continue
        if in_body and line.startswith("}"):
            in_body = False
            continue
        if not in_body or not line.startswith("  "):
            continue
        m = _OPCODE.match(line)
        if m is None:
            continue
        d = _DBG.search(line)
        frames = meta.frames(d.group(1)) if d else ()
        out.append((Instr(m.group(1), False, i, frames[0] if frames else None, line.strip()), frames))
    return out
