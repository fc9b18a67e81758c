"""The kernel's argument list in captured TTIR/TTGIR text, and attributes set on one argument by name.

Captured IR names the kernel's arguments after the Python parameters (`%lda: i32 loc("lda"(#loc))`), because
Triton gives each argument a name location. Where that name is missing (`%arg3`), the argument is found by its
position among the kernel's non-constexpr parameters, which is how Triton numbers them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from irscope.whatif.edits import ArgAttr, WhatIfError

_FUNC = re.compile(r"^\s*tt\.func\s+public\s+@([\w$.-]+)\(", re.M)
_OPEN, _CLOSE = "([{<", ")]}>"


@dataclass(frozen=True)
class Argument:
    ssa: str  # %lda or %arg3
    start: int  # offsets of the argument's text in the module text
    end: int
    text: str


def _split_top(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the comma-separated items of text[start:end] at bracket depth 0 (strings skipped)."""
    spans, depth, item, i = [], 0, start, start
    while i < end:
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1)
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE and not (c == ">" and text[i - 1] == "-"):  # `->` is no bracket
            depth -= 1
        elif c == "," and depth == 0:
            spans.append((item, i))
            item = i + 1
        i += 1
    if text[item:end].strip():
        spans.append((item, end))
    return spans


def _matching(text: str, open_at: int) -> int:
    depth, i = 0, open_at
    while i < len(text):
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1)
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE and not (c == ">" and text[i - 1] == "-"):
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise WhatIfError("the kernel's argument list in the IR is not closed")


def kernel_arguments(text: str) -> tuple[str, list[Argument]]:
    """(kernel name, its arguments) of the module's public tt.func."""
    m = _FUNC.search(text)
    if m is None:
        raise WhatIfError("the IR has no public tt.func (the kernel) to edit")
    close = _matching(text, m.end() - 1)
    args = []
    for s, e in _split_top(text, m.end(), close):
        while text[s].isspace():
            s += 1
        ssa = text[s:e].split(":", 1)[0].strip()
        args.append(Argument(ssa, s, e, text[s:e]))
    return m.group(1), args


def find_argument(args: list[Argument], name: str, runtime_params: list[str]) -> Argument:
    """The argument called `name`: `%name` in named IR, else `%argN` by its place among the runtime parameters."""
    for a in args:
        if a.ssa == f"%{name}":
            return a
    if name in runtime_params and len(runtime_params) == len(args):
        pos = runtime_params.index(name)
        if args[pos].ssa == f"%arg{pos}":
            return args[pos]
    raise WhatIfError(
        f"no kernel argument {name!r} in the IR; its arguments are "
        + ", ".join(a.ssa.lstrip("%") for a in args)
        + " (constexpr parameters are folded into the IR and take --constexpr instead)"
    )


def set_attribute(arg: Argument, edit: ArgAttr) -> tuple[str, str]:
    """The argument's new text and what changed ("added" / "changed from 4 to" / "already")."""
    attr, value = edit.attribute, f"{edit.value} : i32"
    text = arg.text
    brace = _attr_dict(text)
    if brace is None:
        cut = text.find(" loc(")
        cut = len(text) if cut < 0 else cut
        return f"{text[:cut]} {{{attr} = {value}}}{text[cut:]}", "added to"
    b0, b1 = brace
    entries = [text[s:e].strip() for s, e in _split_top(text, b0 + 1, b1)]
    for i, entry in enumerate(entries):
        key, _, old = entry.partition("=")
        if key.strip() == attr:
            if old.strip() == value:
                return text, "already"
            entries[i] = f"{attr} = {value}"
            return f"{text[: b0 + 1]}{', '.join(entries)}{text[b1:]}", f"changed from {old.split(':')[0].strip()} to"
    entries.append(f"{attr} = {value}")
    return f"{text[: b0 + 1]}{', '.join(entries)}{text[b1:]}", "added to"


def _attr_dict(arg_text: str) -> tuple[int, int] | None:
    """Offsets of the `{...}` argument-attribute dictionary after the type, if any."""
    depth, i = 0, arg_text.index(":") + 1
    while i < len(arg_text):
        c = arg_text[i]
        if c == '"':
            i = arg_text.index('"', i + 1)
        elif c == "{" and depth == 0:
            return i, _matching(arg_text, i)
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE and not (c == ">" and arg_text[i - 1] == "-"):
            depth -= 1
        elif arg_text.startswith(" loc(", i) and depth == 0:
            return None
        i += 1
    return None


def apply_arg_attrs(text: str, edits: list[ArgAttr], runtime_params: list[str], stage: str) -> tuple[str, list[str]]:
    """The module text with every attribute edit applied, and one sentence per edit saying where."""
    where = []
    for edit in edits:
        _, args = kernel_arguments(text)
        arg = find_argument(args, edit.name, runtime_params)
        new, how = set_attribute(arg, edit)
        line = text.count("\n", 0, arg.start) + 1
        label = f"{arg.ssa} ({edit.name})" if arg.ssa != f"%{edit.name}" else arg.ssa
        if how == "already":
            where.append(f"{edit.attribute} = {edit.value} was already on {label} in {stage} line {line}: no change")
        else:
            where.append(f"{edit.attribute} = {edit.value} {how} {label} in {stage} line {line}")
        text = text[: arg.start] + new + text[arg.end :]
    return text, where
