"""Strict reading of a rewriter's reply: exactly one fenced Python module that defines `forward`.

The import allow-list is a first filter, not containment: a candidate that passes it can still misbehave at
run time (read the environment through `torch.os`, spin, fork), which is why candidates run only in the sandbox.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

ALLOWED_IMPORTS = frozenset({"torch", "triton", "math", "typing", "__future__"})
_PYTHON_TAGS = ("python", "py", "python3", "")
# Builtins that import or execute code by name would bypass the import allow-list.
_DYNAMIC = frozenset({"__import__", "exec", "eval", "compile", "__builtins__"})
DESCRIPTION_CHARS = 600


class ReplyError(ValueError):
    """The reply is not a usable module; the message is fed back to the rewriter as is."""


@dataclass(frozen=True)
class Module:
    source: str
    description: str  # the prose before the code block


def _blocks(reply: str) -> tuple[list[tuple[str, str, int]], str]:
    """Fenced blocks as (language tag, body, first line number), and the prose before the first one."""
    blocks: list[tuple[str, str, int]] = []
    lines = reply.splitlines()
    prose: list[str] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped.startswith("```"):
            if not blocks:
                prose.append(lines[i])
            i += 1
            continue
        tag, start = stripped[3:].strip().lower(), i + 1
        j = start
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        if j == len(lines):
            raise ReplyError(f"the code block opened on line {i + 1} is never closed (was the reply cut off?)")
        blocks.append((tag, "\n".join(lines[start:j]) + "\n", start + 1))
        i = j + 1
    return blocks, "\n".join(prose).strip()


def _check_imports(tree: ast.Module, allowed: frozenset[str]) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                raise ReplyError(f"line {node.lineno}: relative import; import only {', '.join(sorted(allowed))}")
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Name) and node.id in _DYNAMIC:
            raise ReplyError(f"line {node.lineno}: {node.id} is not allowed (it would bypass the import allow-list)")
        else:
            continue
        for name in names:
            if name.split(".")[0] not in allowed:
                raise ReplyError(
                    f"line {node.lineno}: import of {name!r} is not allowed; import only {', '.join(sorted(allowed))}"
                )


def parse_reply(reply: str, finish_reason: str | None = None, allowed: frozenset[str] = ALLOWED_IMPORTS) -> Module:
    """The module in `reply`, or ReplyError saying precisely what is wrong with it."""
    if finish_reason == "length":
        raise ReplyError(
            "the reply was cut off at the token limit (finish_reason=length); reply with less prose "
            "and the complete module"
        )
    blocks, prose = _blocks(reply)
    python = [b for b in blocks if b[0] in _PYTHON_TAGS]
    if not python:
        raise ReplyError("the reply has no ```python code block")
    if len(python) > 1:
        raise ReplyError(f"the reply has {len(python)} Python code blocks; give exactly one complete module")
    _, body, first_line = python[0]
    try:
        tree = ast.parse(body)
    except SyntaxError as e:
        raise ReplyError(
            f"syntax error in the code block at line {e.lineno} (reply line "
            f"{(e.lineno or 1) + first_line - 1}): {e.msg}"
        ) from e
    if not any(isinstance(n, ast.FunctionDef) and n.name == "forward" for n in tree.body):
        raise ReplyError("the module does not define a top-level function `forward`")
    _check_imports(tree, allowed)
    return Module(body, prose[:DESCRIPTION_CHARS])
