"""Where the time went, from py-spy's raw output (`py-spy record --subprocesses --format raw`, as
scripts/runner_profile.sh writes it): samples per process, or per call path below a frame of one process.

    python -m tools.profile_summary STACKS                      # samples per process
    python -m tools.profile_summary STACKS --process 3011       # frames of process 3011, inclusive samples
    python -m tools.profile_summary STACKS --process 3011 --under "Runner.validate (" --depth 3

A raw line is a stack, frames joined by `;` (outermost first, each `function (file:line)`), a space and a count;
with --subprocesses the stack starts with `process PID:"command line"` frames, and a command line may hold
newlines, so records are split on the trailing count rather than on lines.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

RECORD = re.compile(r"(.*?) (\d+)\n", flags=re.S)
PROCESS = re.compile(r'process (\d+):"(.*)', flags=re.S)


@dataclass(frozen=True)
class Sample:
    pid: str
    command: str
    frames: tuple[str, ...]  # outermost first, below the process frames
    count: int


def read(path: Path) -> list[Sample]:
    samples = []
    for stack, count in RECORD.findall(path.read_text()):
        frames = stack.split(";")
        marks = [i for i, f in enumerate(frames) if f.startswith("process ")]
        pid, command = "?", ""
        if marks and (m := PROCESS.match(frames[marks[-1]])):
            pid, command = m.group(1), " ".join(m.group(2).split())
        samples.append(Sample(pid, command, tuple(frames[marks[-1] + 1 :] if marks else frames), int(count)))
    return samples


def short(frame: str) -> str:
    """`function (path/to/file.py:12)` → `function (file.py:12)`."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rsplit('/', 1)[-1]}" if where else name


def per_process(samples: list[Sample]) -> Counter:
    out: Counter = Counter()
    for s in samples:
        out[(s.pid, s.command[:110])] += s.count
    return out


def below(samples: list[Sample], pid: str, under: str | None, depth: int) -> tuple[int, Counter]:
    """Samples of `pid`, and inclusive counts: of each frame (no `under`), or of each call path of `depth` frames
    below the first frame containing `under`."""
    total, out = 0, Counter[str]()
    for s in samples:
        if s.pid != pid:
            continue
        total += s.count
        if under is None:
            for frame in {short(f) for f in s.frames}:
                out[frame] += s.count
            continue
        at = next((i for i, f in enumerate(s.frames) if under in f), None)
        if at is not None:
            out[" | ".join(short(f) for f in s.frames[at + 1 : at + 1 + depth]) or "(itself)"] += s.count
    return total, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stacks", type=Path)
    ap.add_argument("--process", help="a pid from the per-process listing")
    ap.add_argument("--under", help="text of a frame (e.g. 'Runner.validate ('): the paths below it")
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    samples = read(args.stacks)
    if args.process is None:
        for (pid, command), n in per_process(samples).most_common(args.top):
            print(f"{n:7d}  {pid:>7}  {command}")
        return
    total, counts = below(samples, args.process, args.under, args.depth)
    print(f"process {args.process}: {total} samples")
    for key, n in counts.most_common(args.top):
        print(f"{n:7d}  {key}")


if __name__ == "__main__":
    main()
