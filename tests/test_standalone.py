"""The repository stands alone: no tracked file points at a development machine or at documentation that is not
in the repository, and README's layout table matches the folders.

A user who clones the repository gets everything a reference names: a citation of a design note that only
lived on a developer's machine, or a stale path after a package moved, is a dead end for them. The checker is a
pure function over (path, text, tracked files) so its rules are pinned on synthetic text below as well as run
over every tracked file.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Recorded run data (device-machine JSON, logs, archives, plots) may hold that machine's paths as data; the
# Markdown pages next to them are prose and are scanned like every other file.
RECORDED_DATA = re.compile(r"^docs/results/.+\.(?:json|jsonl|log|xz|gz|tar|png|svg|html)$")

# Home and work folders of development machines, and the sibling notes folder some checkouts sit next to.
MACHINE_PATH = re.compile(r"(?<![\w.:/$}-])(?:/work|/root|/home|/Users)/|(?<![\w.~$}/-])~[/]|\.\./shared\b")
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")
# A Markdown file name, with optional folders and an optional #anchor: `README.md`, `docs/suite.md#design-rules`.
DOC_REF = re.compile(r"(?<![\w.*/$}<-])((?:\.\./)*(?:[\w*][\w.*-]*/)*[\w*][\w.*-]*\.md)(?:#([\w-]+))?(?![\w/])")
# A Python file under a folder: `suite/ops/softmax.py`; checked when its first folder is a top-level one.
CODE_REF = re.compile(r"(?<![\w.*/$}<-])((?:[\w-]+/)+[\w*-]+\.py)(?![\w/])")
# CI's entry point, the one tracked file that may name the sibling folder: it links the compiler sources provided
# there as third_party/triton (nothing else may depend on that folder existing).
SIBLING_LINKER = ".ci/run"
# Where users place checkouts of other projects: paths under it name their files, not ours.
EXTERNAL_PREFIXES = ("third_party/",)
# `-o r.md`, `> "$run/report.md"`: names of files a command writes, not references.
OUTPUT_ARG = re.compile(r"(?:(?<![\w-])-o|--out|>)\s*[\"'`]?$")


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    ref: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.ref!r}: {self.why}"


def slug(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's rule) gives a heading: lower case, punctuation other than `-` and
    `_` dropped, spaces to hyphens. Code spans and bold lose their markers."""
    text = re.sub(r"[`*]", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every heading anchor of a Markdown text (outside fenced code), with GitHub's -1, -2 suffixes for repeats."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"#{1,6}\s+(.+?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def _normalize(path: PurePosixPath) -> str | None:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None  # above the repository root
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _matches(candidate: str, tracked: frozenset[str]) -> list[str]:
    if "*" in candidate:
        return [t for t in tracked if fnmatchcase(t, candidate)]
    if candidate in tracked:
        return [candidate]
    prefix = candidate.rstrip("/") + "/"
    return [candidate] if any(t.startswith(prefix) for t in tracked) else []


def _resolve(ref: str, referrer: str, tracked: frozenset[str]) -> list[str]:
    """Tracked files `ref` names: relative to the repository root, to the referring file's folder or to a top-level
    folder (a page describing a package names its files from the package: `cards/*.md` in docs/patterns.md), or,
    for a bare file name, any tracked file of that name."""
    top = sorted({t.split("/", 1)[0] for t in tracked if "/" in t})
    bases = [PurePosixPath(""), PurePosixPath(referrer).parent, *map(PurePosixPath, top)]
    for base in bases:
        candidate = _normalize(base / ref)
        if candidate and (found := _matches(candidate, tracked)):
            return found
    if "/" not in ref:
        return [t for t in tracked if fnmatchcase(PurePosixPath(t).name, ref)]
    return []


def _quoted_name(line: str, start: int, end: int) -> bool:
    """`"r.md"` in code: a file name the program reads or writes, not a citation."""
    return start > 0 and end < len(line) and line[start - 1] in "\"'" and line[end] == line[start - 1]


def find_outside_references(path: str, text: str, tracked: frozenset[str], texts: dict[str, str]) -> list[Finding]:
    """Every reference in `text` (the content of tracked file `path`) to something outside the repository:
    a development machine's absolute path, a Markdown file or an anchor in one that no tracked file provides,
    or a Python path under a top-level folder that does not exist. `texts` holds the Markdown files' contents
    for the anchors."""
    top = {t.split("/", 1)[0] for t in tracked if "/" in t}
    is_code = path.endswith(".py")
    findings: list[Finding] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = URL.sub(lambda m: " " * len(m.group(0)), raw)
        for m in MACHINE_PATH.finditer(line):
            if path == SIBLING_LINKER and m.group(0).startswith("../"):
                continue
            findings.append(Finding(path, number, m.group(0), "absolute path of a development machine"))
        for pattern in (DOC_REF, CODE_REF):
            for m in pattern.finditer(line):
                ref = m.group(1)
                if ref.startswith(EXTERNAL_PREFIXES) or OUTPUT_ARG.search(line[: m.start()]):
                    continue
                if is_code and _quoted_name(line, m.start(), m.end()):
                    continue
                if pattern is CODE_REF and ref.split("/", 1)[0] not in top:
                    continue  # a path inside another project (Triton's lib/…, python/…), not ours
                found = _resolve(ref, path, tracked)
                anchor = m.group(2) if pattern is DOC_REF else None
                if not found:
                    findings.append(Finding(path, number, ref, "no such file in the repository"))
                elif anchor and len(found) == 1 and anchor not in anchors(texts.get(found[0], "")):
                    findings.append(Finding(path, number, f"{ref}#{anchor}", f"no heading #{anchor} in {found[0]}"))
    return findings


# ---- the checker on synthetic text: each rule fires, and what is legitimate passes -------------------------

TRACKED = frozenset(
    {
        "README.md",
        "docs/suite.md",
        "docs/results/run/README.md",
        "suite/ops/softmax.py",
        "patterns/cards/split-k.md",
        "third_party/README.md",
    }
)
TEXTS = {"docs/suite.md": "# The suite\n\n## Design rules\n\n### Five cases per operator\n\n## Design rules\n"}
# The synthetic references that must fail are spelled in pieces, so that this file itself, scanned with the rest
# of the repository, holds none of them.
MD = ".md"
SHARED_DIR = "sha" + "red"
WORK, SHARED, HOME, TILDE = "/wo" + "rk/", "../" + SHARED_DIR, "/ho" + "me/", "~" + "/"
NOTES, DESIGN = "SUITE" + MD, "DESIGN" + MD
PAGE = "docs/page" + MD  # the referring page of most cases: not in TRACKED
DESIGN_PAGE, SCRIPT = "docs/design" + MD, "suite/calib_suite" + ".py"
NO_SECTION, SECOND_HEADING = f"docs/suite{MD}#no-such-section", f"docs/suite{MD}#design-rules-1"


def check(text: str, path: str = PAGE) -> list[str]:
    return [f.ref for f in find_outside_references(path, text, TRACKED, TEXTS)]


@pytest.mark.parametrize(
    "text, refs",
    [
        (f"where: {WORK}{SHARED_DIR}/{NOTES} §5", [WORK]),
        (f"see {SHARED}/notes{MD}", [SHARED, f"{SHARED}/notes{MD}"]),
        (f"cache in {HOME}me/.cache and {TILDE}.triton", [HOME, TILDE]),
        (f"the specification ({NOTES} §3)", [NOTES]),
        (f"{DESIGN_PAGE} gives the layers", [DESIGN_PAGE]),
        (f"python3 {SCRIPT} moe_triton", [SCRIPT]),
        (f"`{NO_SECTION}`", [NO_SECTION]),
        (f'"notes{MD}" outside code', [f"notes{MD}"]),
    ],
)
def test_checker_flags_outside_references(text: str, refs: list[str]) -> None:
    assert check(text) == refs


@pytest.mark.parametrize(
    "text, path",
    [
        ("where: docs/suite.md#design-rules, docs/suite.md#five-cases-per-operator", "patterns/cards/split-k.md"),
        (f"the second heading of that name: {SECOND_HEADING}", PAGE),
        ("a sibling page: suite.md; up and over: ../README.md", "docs/suite.md"),
        ("a card by name: split-k.md, every card: patterns/cards/*.md, from the package: cards/*.md", PAGE),
        ("kernels: suite/ops/softmax.py; Triton's lib/Analysis/AxisInfo.cpp and python/triton/compiler.py", PAGE),
        (f"https://github.com/org/repo/blob/main/{DESIGN} and https://host{HOME}x", PAGE),
        ("sources go to third_party/triton/README.md", PAGE),
        (f'md = tmp_path / "r{MD}"', "tests/test_x.py"),
        (f'irscope report DIR -o r{MD}; ladder report "$run" > "$run/report{MD}"', PAGE),
        (f"`irscope report DIR -o FILE.html` (or `-o FILE{MD}`)", PAGE),
    ],
)
def test_checker_accepts_references_into_the_repository(text: str, path: str) -> None:
    assert check(text, path) == []


def test_only_ci_names_the_sibling_folder() -> None:
    """.ci/run links the sources provided beside the repository; any other file naming that folder is flagged, and
    .ci/run naming a machine's absolute path is too."""
    assert check(f"ln -s {SHARED}/triton-src third_party/triton", SIBLING_LINKER) == []
    assert check(f"ln -s {SHARED}/triton-src third_party/triton", "scripts/ci.sh") == [SHARED]
    assert check(f"ln -s {WORK}{SHARED_DIR}/triton-src third_party/triton", SIBLING_LINKER) == [WORK]


def test_findings_name_file_line_and_reason() -> None:
    (f,) = find_outside_references(PAGE, f"ok\nsee {NOTES}\n", TRACKED, TEXTS)
    assert (f.path, f.line, f.ref) == (PAGE, 2, NOTES)
    assert str(f) == f"{PAGE}:2: {NOTES!r}: no such file in the repository"


# ---- the repository itself ---------------------------------------------------------------------------------


@cache
def tracked_files() -> tuple[str, ...]:
    """Every file git tracks here (and that exists in the work tree); none outside a git checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ()
    return tuple(p for p in out.decode().split("\0") if p and (ROOT / p).is_file())


def text_of(path: str) -> str | None:
    data = (ROOT / path).read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def scanned(files: Iterable[str]) -> dict[str, str]:
    texts = {p: text_of(p) for p in files if not RECORDED_DATA.match(p)}
    return {p: t for p, t in texts.items() if t is not None}


def test_no_tracked_file_references_anything_outside_the_repository() -> None:
    files = tracked_files()
    if not files:
        pytest.skip("not a git checkout: nothing tracked to scan")
    texts = scanned(files)
    assert len(texts) > 100  # the scan reached the sources, docs and cards
    tracked = frozenset(files)
    findings = [f for p, t in texts.items() for f in find_outside_references(p, t, tracked, texts)]
    assert not findings, "references to outside the repository:\n" + "\n".join(map(str, findings))


# ---- README's layout table ---------------------------------------------------------------------------------

# The layers, data flowing downhill: a package may import only packages to its left.
LAYERS = ("irscope", "compiler_index", "suite", "patterns", "ladder", "tools")


def layout_rows(readme: str) -> list[list[str]]:
    """The backticked paths in the first column of each row of the table under README's "## Layout" heading."""
    section = re.search(r"^## Layout\b.*?$(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if not section:
        return []
    rows = [line for line in section.group(1).splitlines() if line.startswith("|")]
    return [re.findall(r"`([^`]+)`", r.split("|")[1]) for r in rows[2:]]  # after the header and separator


def layout_problems(readme: str, tracked: frozenset[str]) -> list[str]:
    """What is wrong with README's layout table: paths that do not exist, top-level folders it leaves out, layers
    out of data-flow order."""
    rows = layout_rows(readme)
    if not rows:
        return ['no "## Layout" table']
    problems = [f"a row names no path in backticks: {i + 1}" for i, row in enumerate(rows) if not row]
    named = [p for row in rows for p in row]
    problems += [f"no such file or folder: {p}" for p in named if not _matches(p.rstrip("/"), tracked)]
    described = {p.strip("/").split("/", 1)[0] for p in named}
    folders = sorted({t.split("/", 1)[0] for t in tracked if "/" in t and not t.startswith(".")})
    problems += [f"top-level folder missing: {f}/" for f in folders if f not in described]
    first = {}
    for layer in LAYERS:
        at = [i for i, row in enumerate(rows) if any(p.startswith(f"{layer}/") for p in row)]
        if at:
            first[layer] = at[0]
    order = tuple(sorted(first, key=first.__getitem__))
    if order != tuple(layer for layer in LAYERS if layer in first):
        problems.append(f"layers in the order {' ← '.join(order)}, data flows {' ← '.join(LAYERS)}")
    return problems


def test_layout_table_matches_the_folders() -> None:
    files = tracked_files()
    if not files:
        pytest.skip("not a git checkout")
    assert layout_problems((ROOT / "README.md").read_text(), frozenset(files)) == []


LAYOUT_TRACKED = frozenset(
    {"irscope/trajectory.py", "irscope/store.py", "suite/ops/x.py", "ladder/c.py", "docs/d.md", ".ci/run"}
)


def layout(*rows: str) -> str:
    return (
        "# x\n\n## Layout\n\n| folder | what |\n|---|---|\n" + "".join(f"| {r} | y |\n" for r in rows) + "\n## Next\n"
    )


@pytest.mark.parametrize(
    "readme, problems",
    [
        (layout("`irscope/trajectory.py`, `irscope/store.py`", "`suite/`", "`ladder/`", "`docs/`"), []),
        (layout("`irscope/`", "`suite/`", "`ladder/`", "`docs/`", "`nowhere/`"), ["no such file or folder: nowhere/"]),
        (layout("`irscope/`", "`suite/ops/`", "`ladder/`"), ["top-level folder missing: docs/"]),
        (
            layout("`irscope/`", "`ladder/`", "`suite/`", "`docs/`"),
            ["layers in the order irscope ← ladder ← suite, data flows " + " ← ".join(LAYERS)],
        ),
        (
            layout("`irscope/`", "plain words", "`suite/`", "`ladder/`", "`docs/`"),
            ["a row names no path in backticks: 2"],
        ),
        ("# x\n\nno table\n", ['no "## Layout" table']),
    ],
)
def test_layout_check_on_synthetic_tables(readme: str, problems: list[str]) -> None:
    assert layout_problems(readme, LAYOUT_TRACKED) == problems
