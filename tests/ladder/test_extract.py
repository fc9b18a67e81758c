"""Strict reading of rewriter replies: one fenced module defining forward, allow-listed imports only."""

from __future__ import annotations

import re

import pytest

from ladder.rewriters.extract import ReplyError, parse_reply
from tests.ladder import candidates


def test_a_good_reply_yields_the_module_and_its_description():
    m = parse_reply(candidates.reply(candidates.VALID, "Wider blocks.\nSecond line."))
    assert m.source == candidates.VALID
    assert m.description == "Wider blocks.\nSecond line."


@pytest.mark.parametrize("tag", ["python", "py", "Python3", ""])
def test_python_fence_tags(tag):
    assert parse_reply(f"x\n```{tag}\n{candidates.VALID}```").source == candidates.VALID


def test_non_python_blocks_are_ignored():
    reply = f"Run it with:\n```bash\npython bench.py\n```\n```python\n{candidates.VALID}```"
    assert parse_reply(reply).source == candidates.VALID


@pytest.mark.parametrize(
    ("reply", "finish", "message"),
    [
        ("I would use larger blocks.", "stop", "no ```python code block"),
        (candidates.reply(candidates.VALID) * 2, "stop", "2 Python code blocks"),
        ("```python\ndef forward(x):\n    return x +\n```", "stop", "syntax error in the code block at line 2"),
        ("```python\nimport torch\ndef fwd(x):\n    return x\n```", "stop", "does not define a top-level function"),
        ("```python\nclass K:\n    def forward(self, x):\n        return x\n```", "stop", "top-level function"),
        ("```python\n" + candidates.VALID[:200], "length", "cut off at the token limit"),
        ("```python\n" + candidates.VALID[:200], "stop", "never closed"),
        (candidates.reply(candidates.VALID), "length", "finish_reason=length"),
    ],
)
def test_malformed_replies_say_what_is_wrong(reply, finish, message):
    with pytest.raises(ReplyError, match=re.escape(message)):
        parse_reply(reply, finish)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("import os", "import of 'os' is not allowed"),
        ("import subprocess as sp", "import of 'subprocess'"),
        ("from socket import socket", "import of 'socket'"),
        ("from . import helpers", "relative import"),
        ("import torch, ctypes", "import of 'ctypes'"),
        ("os = __import__('os')", "__import__ is not allowed"),
        ("exec('import os')", "exec is not allowed"),
        ("b = __builtins__", "__builtins__ is not allowed"),
    ],
)
def test_imports_outside_the_allow_list_are_rejected(line, message):
    source = f"{line}\n{candidates.VALID}"
    with pytest.raises(ReplyError, match=message):
        parse_reply(candidates.reply(source))


def test_allowed_imports_pass():
    source = "from __future__ import annotations\nimport math\nfrom typing import Any\n" + candidates.VALID
    assert parse_reply(candidates.reply(source)).source == source


@pytest.mark.parametrize("name", sorted(candidates.HOSTILE))
def test_hostile_code_that_imports_nothing_forbidden_passes_the_parser(name):
    # The parser is a filter, not containment: these reach the sandbox, which must neutralize them.
    assert "def forward" in parse_reply(candidates.reply(candidates.HOSTILE[name])).source
