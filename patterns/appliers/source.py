"""A kernel module as text plus syntax tree, and precise edits that leave every other byte unchanged.

`ast` positions are UTF-8 byte columns, so edits work on the encoded bytes; suite kernels carry non-ASCII
docstrings ("·", "−") and a character-based edit would land in the wrong place.
"""

from __future__ import annotations

import ast
import itertools
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from patterns.features import KernelAnalysis, Launch, ModuleNames, find_launches, jit_functions
from patterns.features.reader import attr_path


class EditError(ValueError):
    """Edits that overlap or produce source that no longer parses."""


@dataclass(frozen=True)
class Edit:
    start: int  # byte offsets into the UTF-8 source
    end: int
    text: str


class Located(Protocol):
    """A syntax node with a source position: statements, expressions, keywords, arguments."""

    @property
    def lineno(self) -> int: ...
    @property
    def col_offset(self) -> int: ...
    @property
    def end_lineno(self) -> int | None: ...
    @property
    def end_col_offset(self) -> int | None: ...


class SourceModule:
    def __init__(self, text: str, path: str = "<kernel>"):
        self.text, self.path = text, path
        self.data = text.encode()
        self.tree = ast.parse(text, filename=path)
        self._line_starts = [0]
        for i, b in enumerate(self.data):
            if b == 0x0A:
                self._line_starts.append(i + 1)
        self.names = ModuleNames(self.tree)

    # --- positions -----------------------------------------------------------------------------------------

    def offset(self, lineno: int, col: int) -> int:
        return self._line_starts[lineno - 1] + col

    def span(self, node: Located) -> tuple[int, int]:
        return self.offset(node.lineno, node.col_offset), self.offset(*self._end(node))

    def _end(self, node: Located) -> tuple[int, int]:
        # ast.parse sets end positions on every node; only a hand-built node lacks them.
        if node.end_lineno is None or node.end_col_offset is None:
            raise EditError(f"{self.path}:{node.lineno}: syntax node without an end position")
        return node.end_lineno, node.end_col_offset

    def segment(self, node: Located) -> str:
        a, b = self.span(node)
        return self.data[a:b].decode()

    def line_of(self, node: Located) -> tuple[int, int]:
        """Byte span of the whole physical lines a statement occupies, newline included."""
        start = self._line_starts[node.lineno - 1]
        end_line = self._end(node)[0]
        end = self._line_starts[end_line] if end_line < len(self._line_starts) else len(self.data)
        return start, end

    def indent_of(self, node: Located) -> str:
        start = self._line_starts[node.lineno - 1]
        line = self.data[start : start + node.col_offset].decode()
        return line if line.strip() == "" else " " * len(line)

    def call_append(self, call: ast.Call, text: str) -> Edit:
        """Insert `text` (e.g. `eviction_policy="evict_first"`) as the last argument of `call`."""
        _, end = self.span(call)
        close = end - 1
        if self.data[close : close + 1] != b")":
            raise EditError(f"{self.path}:{call.lineno}: call does not end with ')'")
        i = close - 1
        while i >= 0 and self.data[i : i + 1] in (b" ", b"\n", b"\t", b"\r"):
            i -= 1
        prev = self.data[i : i + 1]
        if prev == b"(":
            return Edit(close, close, text)
        if prev == b",":
            return Edit(i + 1, i + 1, f" {text}")
        return Edit(i + 1, i + 1, f", {text}")

    def remove_keywords(self, call: ast.Call, names: set[str]) -> list[Edit]:
        """Delete the keywords `names` from a call together with the commas that separate them."""
        items: list[ast.expr | ast.keyword] = sorted(
            [*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset)
        )
        drop = [isinstance(n, ast.keyword) and n.arg in names for n in items]
        missing = names - {n.arg for n in call.keywords}
        if missing:
            raise EditError(f"{self.path}:{call.lineno}: no keyword(s) {', '.join(sorted(missing))} to remove")
        edits, i = [], 0
        while i < len(items):
            if not drop[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(items) and drop[j + 1]:
                j += 1
            if i > 0:
                edits.append(Edit(self.span(items[i - 1])[1], self.span(items[j])[1], ""))
            elif j + 1 < len(items):
                edits.append(Edit(self.span(items[i])[0], self.span(items[j + 1])[0], ""))
            else:
                edits.append(Edit(self.span(items[i])[0], self.span(items[j])[1], ""))
            i = j + 1
        return edits

    # --- analyses ------------------------------------------------------------------------------------------

    @cached_property
    def jits(self) -> list[tuple[ast.FunctionDef, list[str]]]:
        return jit_functions(self.tree, self.names)

    @cached_property
    def kernels(self) -> dict[str, KernelAnalysis]:
        return {f.name: KernelAnalysis(f, self.names) for f, _ in self.jits}

    @cached_property
    def launches(self) -> list[Launch]:
        return find_launches(self.tree, set(self.kernels))

    def decorators(self, kernel: str) -> list[str]:
        return next(d for f, d in self.jits if f.name == kernel)

    def apply(self, edits: list[Edit]) -> str:
        """The source with `edits` applied; raises EditError if they overlap or the result does not parse."""
        ordered = sorted(edits, key=lambda e: (e.start, e.end))
        for a, b in itertools.pairwise(ordered):
            if b.start < a.end:
                raise EditError(f"{self.path}: overlapping edits at bytes {a.start}-{a.end} and {b.start}-{b.end}")
        out = bytearray(self.data)
        for e in reversed(ordered):
            out[e.start : e.end] = e.text.encode()
        text = out.decode()
        try:
            ast.parse(text)
        except SyntaxError as err:
            raise EditError(f"{self.path}: the edited source does not parse: {err.msg} (line {err.lineno})") from err
        return text


def host_bindings(fn: ast.FunctionDef | None, name: str) -> list[ast.Assign]:
    """Assignments to `name` in a host function."""
    if fn is None:
        return []
    return [
        n
        for n in ast.walk(fn)
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
    ]


def name_loads(fn: ast.AST | None, name: str) -> list[ast.Name]:
    if fn is None:
        return []
    return [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


def float_literal(expr: ast.expr | None) -> float | None:
    """float("-inf"), -float("inf"), -math.inf, float('inf'), 1e30, 3, ... → the value; None if not a literal."""
    if expr is None:
        return None
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
        v = float_literal(expr.operand)
        return None if v is None else (-v if isinstance(expr.op, ast.USub) else v)
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int | float) and not isinstance(expr.value, bool):
        return float(expr.value)
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "float"
        and len(expr.args) == 1
        and not expr.keywords
        and isinstance(expr.args[0], ast.Constant)
        and isinstance(expr.args[0].value, str)
    ):
        try:
            return float(expr.args[0].value)
        except ValueError:
            return None
    if attr_path(expr) == "math.inf":
        return math.inf
    return None


def assigned_names(stmts: list[ast.stmt]) -> set[str]:
    """Every name the statements bind (assignments, loop targets, walrus), nested blocks included."""
    return {n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
