"""`make demo`: capture the bundled example kernels for cuda:90 on this CPU and summarize what each pass did.

Writes one trajectory directory per example under out/demo/ and prints, per kernel, the stage table and the
passes that changed the IR.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

import irscope
from irscope.cli import summary_table
from irscope.examples import EXAMPLES
from irscope.targets import DEFAULT_TARGET

console = Console(width=None if sys.stdout.isatty() else 160)


def main(out_root: str = "out/demo") -> int:
    root = Path(out_root)
    for name, ex in EXAMPLES.items():
        out = root / name
        traj = irscope.capture(ex.kernel, target=DEFAULT_TARGET, out_dir=out, kernel_kwargs=ex.args, **ex.options)
        console.rule(f"[bold]{name}[/bold]: {ex.what}")
        console.print(summary_table(traj))
        changed = ", ".join(s.pass_arg for s in traj.changed_passes())
        console.print(f"passes that changed the IR: {changed}")
        res = traj.resources
        console.print(
            f"registers {res.get('registers')}, spills {res.get('spill_store_bytes', 0)} B, shared "
            f"{res.get('shared_bytes')} B → {out}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
