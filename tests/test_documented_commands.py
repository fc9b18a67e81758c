"""Every command the README and docs/ show runs as written.

A user copies a command from the page; if it fails, the page is wrong. So the shell blocks (```sh / ```bash)
and the Python blocks (```python) of README.md and docs/*.md run here, each page in order in a scratch folder
that mirrors the checkout (its top-level entries linked, `out/` fresh), with the project's virtual environment
first on PATH. A block needs no special form; it may say what it needs after the language, where a Markdown
renderer does not show it: ```sh requires=gpu. Requirements (REQUIREMENTS) that this machine lacks skip the
block and name why; `fragment` marks a Python excerpt that is not a program (names defined in prose), and
plain ``` blocks are synopses or output, never run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import triton_source

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"sh", "bash", "shell"}
FENCE = re.compile(r"^```(\S*)(.*)$")
BLOCK_TIMEOUT_S = 900


def _has_gpu() -> bool:
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _has_ascend() -> bool:
    return (ROOT / ".venv-ascend" / "bin" / "python").exists()


# requires=NAME: (the check, what the skip says)
REQUIREMENTS: dict[str, tuple[Callable[[], bool], str]] = {
    "gpu": (_has_gpu, "needs an NVIDIA GPU"),
    "ascend": (_has_ascend, "needs the Ascend environment (make ascend-env)"),
    "triton-sources": (triton_source.present, "needs Triton's sources in third_party/triton (see its README)"),
    "network": (lambda: False, "needs the network (tests never reach it)"),
}


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    language: str
    requires: tuple[str, ...]
    fragment: bool
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path, root: Path = ROOT) -> list[Block]:
    """The fenced blocks of one page with their info strings: `sh requires=gpu,ascend`, `python fragment`."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        language, info = opening.group(1), opening.group(2).split()
        if "=" in language:  # ``` requires=gpu: no language, only the info
            language, info = "", [language, *info]
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        requires = tuple(r for word in info if word.startswith("requires=") for r in word[9:].split(",") if r)
        unknown = [r for r in requires if r not in REQUIREMENTS]
        if unknown:
            raise ValueError(f"{path.name}:{i + 1}: unknown requirement(s) {unknown}; known: {sorted(REQUIREMENTS)}")
        found.append(
            Block(
                str(path.relative_to(root)),
                i + 1,
                language,
                requires,
                "fragment" in info,
                "\n".join(lines[i + 1 : end]),
            )
        )
        i = end + 1
    return found


@dataclass(frozen=True)
class Transcript:
    """One `$ command` of a plain block and what the page shows it printing: an error when that starts with
    `error:` (the command must then fail with a one-line reason, not a traceback)."""

    command: str
    shows_error: bool


def transcripts(block: Block) -> list[Transcript]:
    found: list[Transcript] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            i += 1
            continue
        command = [lines[i][2:]]
        while command[-1].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            command.append(lines[i])
        i += 1
        output = next((line for line in lines[i:] if line.strip()), "")
        found.append(Transcript("\n".join(command), output.startswith("error:")))
    return found


def runnable(block: Block) -> bool:
    if block.fragment:
        return False
    return block.language in SHELL or block.language == "python" or (not block.language and bool(transcripts(block)))


def _scratch(tmp: Path) -> Path:
    """A folder that looks like the checkout to a command: every top-level entry linked, except `out/`, which
    commands write into, and `.venv`, which is the environment running the tests."""
    for entry in ROOT.iterdir():
        if entry.name not in {"out", ".git", ".venv"}:
            (tmp / entry.name).symlink_to(entry)
    (tmp / ".venv").symlink_to(sys.prefix)  # `.venv/bin/irscope`: the environment running these tests
    (tmp / "out").mkdir()
    return tmp


def _env(scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    env["TRITON_CACHE_DIR"] = str(scratch / ".triton-cache")
    env.pop("OPENAI_API_KEY", None)
    return env


def run_block(block: Block, scratch: Path) -> subprocess.CompletedProcess[str]:
    if block.language == "python":
        argv = [sys.executable, "-c", block.text]
        return subprocess.run(
            argv, cwd=scratch, env=_env(scratch), capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S
        )
    return run_shell(block.text, scratch)


def run_shell(script: str, scratch: Path) -> subprocess.CompletedProcess[str]:
    argv = ["bash", "-e", "-o", "pipefail", "-c", script]
    return subprocess.run(argv, cwd=scratch, env=_env(scratch), capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)


def _pages_with_commands() -> list[Path]:
    return [p for p in PAGES if any(runnable(b) for b in blocks(p))]


def test_every_info_string_is_understood():
    """A misspelt requirement would silently run (or never run) a block: every page parses."""
    for page in PAGES:
        blocks(page)
    assert _pages_with_commands(), "no page shows a runnable command: the extraction is broken"


def test_synthetic_page(tmp_path):
    """The extraction on a page written here: languages, requirements, fragments and synopses."""
    page = tmp_path / "p.md"
    page.write_text("x\n```sh requires=gpu\nnvidia-smi\n```\n```\nladder X [--y]\n```\n```python fragment\nf(x)\n```\n")
    found = blocks(page, tmp_path)
    assert [(b.language, b.requires, b.fragment, b.line) for b in found] == [
        ("sh", ("gpu",), False, 2),
        ("", (), False, 5),
        ("python", (), True, 8),
    ]
    assert [runnable(b) for b in found] == [True, False, False]
    page.write_text(
        "``` requires=gpu\n$ irscope dump x \\\n    --out y\n69 snapshots\n$ irscope whatif y\nerror: no\n```\n"
    )
    (transcript,) = blocks(page, tmp_path)
    assert transcript.language == "" and transcript.requires == ("gpu",) and runnable(transcript)
    assert transcripts(transcript) == [
        Transcript("irscope dump x \\\n    --out y", False),
        Transcript("irscope whatif y", True),
    ]
    page.write_text("```sh requires=gpus\nx\n```\n")
    with pytest.raises(ValueError, match="unknown requirement"):
        blocks(page, tmp_path)


@pytest.mark.parametrize("page", _pages_with_commands(), ids=lambda p: p.name)
def test_documented_commands_run(page: Path, tmp_path):
    scratch = _scratch(tmp_path)
    skipped: list[str] = []
    for block in filter(runnable, blocks(page)):
        missing = [REQUIREMENTS[r][1] for r in block.requires if not REQUIREMENTS[r][0]()]
        if missing:
            skipped.append(f"{block.where}: {'; '.join(missing)}")
            continue
        if not block.language:
            for t in transcripts(block):
                done = run_shell(t.command, scratch)
                output = done.stdout + done.stderr
                where = f"{block.where}: $ {t.command}"
                assert "Traceback (most recent call last)" not in output, f"{where} printed a traceback:\n{output}"
                if t.shows_error:
                    assert done.returncode != 0 and "error:" in output, f"{where}: the page shows an error\n{output}"
                else:
                    assert done.returncode == 0, f"{where} exited {done.returncode}:\n{output[-6000:]}"
            continue
        done = run_block(block, scratch)
        output = done.stdout + done.stderr
        assert done.returncode == 0, (
            f"{block.where} exited {done.returncode}:\n{block.text}\n--- output ---\n{output[-6000:]}"
        )
        assert "Traceback (most recent call last)" not in output, (
            f"{block.where} printed a traceback:\n{output[-6000:]}"
        )
    shutil.rmtree(scratch / ".triton-cache", ignore_errors=True)
    if skipped:
        print("skipped blocks:\n  " + "\n  ".join(skipped))
