"""PTX, SASS (nvdisasm -c -g) and AMDGCN text → instructions with their source frame (`.loc`, `//## File`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from irscope.parse.locations import Frame


@dataclass
class Instr:
    opcode: str  # full opcode with modifiers: ld.global.v4.b32, LDG.E.128, global_load_dwordx4
    predicated: bool
    line_no: int  # 1-based line in the text
    frame: Frame | None  # source position from the line table (innermost: may be inside triton/language)
    text: str
    ptx_line: int | None = None  # SASS from `nvdisasm -gp`: the line of the PTX instruction it came from

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]


_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_PTX_INSTR = re.compile(r"^\s*(@!?%\w+\s+)?([a-z][\w.:]*)\b")


def parse_ptx(text: str) -> list[Instr]:
    files = {m.group(1): m.group(2) for line in text.splitlines() if (m := _PTX_FILE.match(line))}
    out: list[Instr] = []
    frame: Frame | None = None
    in_body = False
    for i, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s.startswith("//"):
            continue
        if s.startswith(".loc"):
            if m := _PTX_LOC.match(s):
                f = files.get(m.group(1))
                frame = Frame(f, int(m.group(2)), int(m.group(3))) if f and int(m.group(2)) > 0 else None
            continue
        if s.startswith(".entry") or s.startswith(".visible .entry") or s.startswith(".func"):
            in_body = True
            continue
        if not in_body or s[0] in ".{}$(" or s.endswith(":"):
            continue
        m = _PTX_INSTR.match(s)
        if m:
            out.append(Instr(m.group(2), bool(m.group(1)), i, frame, s))
    return out


_SASS_FILE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
PTX_TEXT = ".nv_debug_ptx_txt"  # the section nvdisasm -gp names: the PTX text ptxas embedded in the cubin
_SASS_INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


def parse_sass(text: str) -> list[Instr]:
    out: list[Instr] = []
    frame: Frame | None = None
    ptx_line: int | None = None
    for i, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("//##"):
            if m := _SASS_FILE.match(line):
                if m.group(1) == PTX_TEXT:
                    ptx_line = int(m.group(2))
                else:
                    frame = Frame(m.group(1), int(m.group(2)), 0)
            continue
        m = _SASS_INSTR.match(line)
        if m:
            out.append(Instr(m.group(2), bool(m.group(1)), i, frame, line.strip(), ptx_line))
    return out


_AMD_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?')
_AMD_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_AMD_INSTR = re.compile(r"^\s+([sv]_\w+|global_\w+|buffer_\w+|ds_\w+|flat_\w+|scratch_\w+)\b")


def parse_amdgcn(text: str) -> list[Instr]:
    files: dict[str, str] = {}
    out: list[Instr] = []
    frame: Frame | None = None
    for i, line in enumerate(text.splitlines(), start=1):
        if m := _AMD_FILE.match(line):
            files[m.group(1)] = f"{m.group(2)}/{m.group(3)}" if m.group(3) else m.group(2)
            continue
        if m := _AMD_LOC.match(line):
            f = files.get(m.group(1))
            frame = Frame(f, int(m.group(2)), int(m.group(3))) if f and int(m.group(2)) > 0 else None
            continue
        if m := _AMD_INSTR.match(line):
            out.append(Instr(m.group(1), False, i, frame, line.strip()))
    return out
