"""MLIR diagnostics as Triton's pass manager prints them on stderr → structured diagnostics.

MLIR's SourceMgr handler writes one block per diagnostic: a header `FILE:LINE:COL: SEVERITY: MESSAGE` (or
`SEVERITY: MESSAGE` where the location has no file), the source line and a caret when the file is readable,
then its notes as blocks of their own: `note: called from` for each caller of an inlined location (the
kernel's line when the op comes from a `tl.*` helper or a `@triton.jit` function it calls) and any note the
pass attached ("Target compute capability (90) supports MMA v3.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from irscope.parse.locations import Frame

SEVERITIES = ("error", "warning", "remark")
_HEADER = re.compile(r"^(?:(?P<loc>.*?):\s)?(?P<sev>error|warning|remark|note):\s(?P<msg>.*)$")
_FILE_LINE_COL = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?$")
_CARET = re.compile(r"^\s*\^[~\s]*$")
CALLED_FROM = "called from"


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # error | warning | remark
    message: str
    frames: tuple[Frame, ...]  # where it points, then the callers ("called from" notes), innermost first
    notes: tuple[str, ...] = ()  # the other notes attached to it


@dataclass
class _Block:
    severity: str | None  # None: text that is not a diagnostic
    raw: list[str]
    frame: Frame | None = None
    message: str = ""


def _frame(loc: str | None) -> Frame | None:
    m = _FILE_LINE_COL.match(loc.strip()) if loc else None
    if m is None:
        return None
    return Frame(m.group("file").strip('"'), int(m.group("line")), int(m.group("col") or 0))


def _blocks(text: str) -> list[_Block]:
    """Header lines open blocks; a source line followed by its caret belongs to the block, other lines continue
    the message (multi-line messages) or, before any header, form a non-diagnostic block."""
    blocks: list[_Block] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _HEADER.match(line.rstrip("\n"))
        if m is not None:
            blocks.append(_Block(m.group("sev"), [line], _frame(m.group("loc")), m.group("msg").strip()))
        elif i + 1 < len(lines) and _CARET.match(lines[i + 1]) and blocks and blocks[-1].severity:
            blocks[-1].raw += [line, lines[i + 1]]  # the quoted source line and its caret
            i += 2
            continue
        elif blocks:
            blocks[-1].raw.append(line)
            if blocks[-1].severity and line.strip():
                blocks[-1].message = f"{blocks[-1].message} {line.strip()}".strip()
        else:
            blocks.append(_Block(None, [line]))
        i += 1
    return blocks


def parse_diagnostics(text: str) -> list[Diagnostic]:
    """Errors, warnings and remarks, each with its notes folded in (call sites become frames)."""
    out: list[Diagnostic] = []
    for b in _blocks(text):
        if b.severity in SEVERITIES:
            out.append(Diagnostic(b.severity, b.message, (b.frame,) if b.frame else ()))
        elif b.severity == "note" and out:
            last = out[-1]
            if b.message == CALLED_FROM and b.frame is not None:
                out[-1] = Diagnostic(last.severity, last.message, (*last.frames, b.frame), last.notes)
            else:
                out[-1] = Diagnostic(last.severity, last.message, last.frames, (*last.notes, b.message))
    return out


def keep_severities(text: str, shown: set[str]) -> str:
    """`text` without the diagnostics (and their notes) whose severity is not in `shown`; other text kept."""
    kept: list[str] = []
    current: str | None = None
    for b in _blocks(text):
        if b.severity != "note":
            current = b.severity
        if current is None or current in shown:
            kept.extend(b.raw)
    return "".join(kept)
