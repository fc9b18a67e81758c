"""Regenerates source_features.json: the source features of every frozen kernel module, the golden that
tests/patterns/test_features.py compares `extract` with.

    PYTHONPATH=. .venv/bin/python tests/patterns/data/make_source_features.py

Each module of suite/kernels/, tests/patterns/data/kernels/ and the bundled examples is read whole and once per
@triton.jit function in it (`kernel=`), without a specialization. Feature lines with no line are left out.
Regenerate only when a feature's meaning changes on purpose, and say so in the commit.
"""

import json
import subprocess
from pathlib import Path

from patterns.features import extract

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
MODULES = [
    *sorted((REPO / "suite" / "kernels").glob("[!_]*.py")),
    *sorted((HERE / "kernels").glob("*.py")),
    REPO / "irscope" / "examples" / "kernels.py",
]


def case(path: Path, kernel: str | None) -> dict:
    f = extract(path.read_text(), filename=path.name, kernel=kernel)
    lines = {k: v for k, v in f.lines.items() if v}
    return {"module": path.relative_to(REPO).as_posix(), "kernel": kernel, "values": f.values, "lines": lines}


def main() -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    cases = []
    for path in MODULES:
        cases.append(case(path, None))
        cases.extend(case(path, k) for k in extract(path.read_text()).kernels)
    comment = f"made by tests/patterns/data/make_source_features.py at commit {commit.stdout.strip()}"
    body = ",\n".join(json.dumps(c) for c in cases)  # one case a line: a changed feature shows as a one-line diff
    (HERE / "source_features.json").write_text(f'{{"comment": {json.dumps(comment)},\n"cases": [\n{body}\n]}}\n')


if __name__ == "__main__":
    main()
