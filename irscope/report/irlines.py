"""Each line of an IR text, as the HTML report needs it: the kernel source line it came from, or that it carries
debug information only (`#loc` definitions, `!DILocation` metadata, PTX `.loc` and DWARF sections, SASS
`//## File` lines), which the page hides by default.

The kernel line comes from the same parsers and line resolver as the per-line counters, so a click on a source
line highlights exactly the IR lines those counters were counted from.
"""

from __future__ import annotations

import difflib
import re

from irscope.parse.asm import Instr, parse_amdgcn, parse_ptx, parse_sass
from irscope.parse.llvmir import parse_llvm_ir
from irscope.parse.locations import LocationTable
from irscope.parse.mlir import parse_mlir
from irscope.signatures.engine import FULL_PARSE_LIMIT, LineResolver, is_llvm_dialect
from irscope.trajectory import AMDGCN, LLVM_IR, MLIR, PTX

SASS = "sass"  # not a snapshot kind: the disassembled cubin, an artifact
DEBUG = -1  # line value: debug information only
NONE = 0  # line value: maps to no line of the kernel's file

_DEBUG_LINE = {
    MLIR: re.compile(r"^(?:#loc\d*|#di_[\w$.-]*) = "),
    LLVM_IR: re.compile(r"^!\d+ = (?:distinct )?!DI|^!llvm\.dbg\.|^\s+(?:#dbg_|call void @llvm\.dbg\.)"),
    PTX: re.compile(r"^\s*\.(?:loc|file)\s"),
    AMDGCN: re.compile(r"^\s*\.(?:loc|file|cfi_\w+)\b"),
    SASS: re.compile(r"^\s*//##"),
}
_DEBUG_SECTION = re.compile(r"^\s*\.section\s+\.debug_")  # DWARF data in PTX and AMDGCN: to its closing brace
_TRAILING_LOC = re.compile(r"\sloc\((.*)\)\s*$")
_DBG_SUFFIX = re.compile(r", !dbg !\d+")


def debug_mask(kind: str, lines: list[str]) -> list[bool]:
    """True for the lines that carry debug information only."""
    pattern = _DEBUG_LINE.get(kind)
    out = [bool(pattern and pattern.match(line)) for line in lines]
    if kind in (PTX, AMDGCN):
        in_section = False
        for i, line in enumerate(lines):
            if _DEBUG_SECTION.match(line):
                in_section = True
            elif in_section and kind == AMDGCN and line.lstrip().startswith((".section", ".text")):
                in_section = False
            if in_section:
                out[i] = True
            if in_section and kind == PTX and line.strip() == "}":
                in_section = False
    return out


def strip_debug(kind: str, line: str) -> str:
    """A code line without its location suffix (`loc(#loc12)`, `, !dbg !7`), as diffs compare it."""
    if kind == MLIR:
        return _TRAILING_LOC.sub("", line)
    if kind == LLVM_IR:
        return _DBG_SUFFIX.sub("", line)
    return line


def _set(out: list[int], line_no: int, value: int) -> None:
    if 0 < line_no <= len(out):  # parsers number lines by splitlines, which may split where "\n" does not
        out[line_no - 1] = value


def _mlir_lines(text: str, kernel_file: str, out: list[int]) -> None:
    if not is_llvm_dialect(text) or len(text) <= FULL_PARSE_LIMIT // 4:
        for op in parse_mlir(text).ops:
            frame = op.location.user_frame(kernel_file)
            if frame is not None and frame.file == kernel_file:
                _set(out, op.line_no, frame.line)
        return
    # LLVM dialect, one op per line and tens of thousands of them: each line's own trailing location
    table = LocationTable(text)
    for i, line in enumerate(text.split("\n")):
        if m := _TRAILING_LOC.search(line):
            frame = table.resolve(m.group(1)).user_frame(kernel_file)
            if frame is not None and frame.file == kernel_file:
                out[i] = frame.line


def _instr_lines(instrs: list[Instr], resolver: LineResolver, out: list[int]) -> None:
    previous = NONE
    for ins in instrs:
        line = resolver.line(ins.frame, previous)
        if line != NONE:
            previous = line
            _set(out, ins.line_no, line)


def source_lines(kind: str, text: str, kernel_file: str, resolver: LineResolver) -> list[int]:
    """Per line of `text`: the kernel line it came from, NONE, or DEBUG."""
    lines = text.split("\n")  # as the page splits it (splitlines would also split at \f, U+2028, …)
    out = [NONE] * len(lines)
    if kind == MLIR:
        _mlir_lines(text, kernel_file, out)
    elif kind == LLVM_IR:
        for ins, frames in parse_llvm_ir(text):
            user = next((f for f in frames if f.file == kernel_file), None)
            if user is not None:
                _set(out, ins.line_no, user.line)
    elif kind == PTX:
        _instr_lines(parse_ptx(text), resolver, out)
    elif kind == AMDGCN:
        _instr_lines(parse_amdgcn(text), resolver, out)
    elif kind == SASS:
        _instr_lines(parse_sass(text), resolver, out)
    for i, debug in enumerate(debug_mask(kind, lines)):
        if debug:
            out[i] = DEBUG
    return out


def run_lengths(values: list[int]) -> list[int]:
    """[value, count, value, count, …]: a line map is long runs of one value."""
    out: list[int] = []
    for v in values:
        if out and out[-2] == v:
            out[-1] += 1
        else:
            out += [v, 1]
    return out


# A pass that inserts one op renumbers every later SSA value (%x_4 → %x_7) and location alias; diffing the
# lines with those numbers blanked shows the ops that changed, not the renumbering.
_RENUMBERED = re.compile(r"(%[A-Za-z_][\w$.-]*?)_\d+\b|%\d+\b|(#loc)\d+\b")
DIFF_LINE_LIMIT = 25_000  # code lines a side; difflib takes 0.3 s on matmul's 20,000-line LLVM-dialect edge


def normalize(line: str) -> str:
    return _RENUMBERED.sub(lambda m: m.group(1) or m.group(2) or "%N", line)


def code_lines(kind: str, text: str) -> list[str]:
    """The lines a diff compares: debug-only lines left out, location suffixes stripped, numbering blanked."""
    lines = text.split("\n")
    return [normalize(strip_debug(kind, line)) for line, debug in zip(lines, debug_mask(kind, lines)) if not debug]


def diff_opcodes(kind_a: str, text_a: str, kind_b: str, text_b: str) -> list[list[int | str]] | None:
    """difflib opcodes over the two texts' code lines (indices count code lines only); None when the languages
    differ or a side is too long, where the page aligns the texts by kernel source line instead."""
    if kind_a != kind_b:
        return None
    la, lb = code_lines(kind_a, text_a), code_lines(kind_b, text_b)
    if len(la) > DIFF_LINE_LIMIT or len(lb) > DIFF_LINE_LIMIT:
        return None
    return [list(op) for op in difflib.SequenceMatcher(a=la, b=lb, autojunk=False).get_opcodes()]
