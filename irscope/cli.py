"""`irscope`: capture and inspect per-pass trajectories of Triton compiles."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from irscope.capture import CompileError, SpecError, capture_request
from irscope.capture.loader import KernelLoadError, load_kernel
from irscope.capture.specialize import build_request, parse_value
from irscope.store import TrajectoryFormatError, load
from irscope.targets import TargetError
from irscope.trajectory import Trajectory

# Wide tables when piped: pass names are long and truncating them hides the point.
console = Console(width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)


def _kv(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SpecError(f"{what} {item!r}: expected NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def summary_table(traj: Trajectory) -> Table:
    t = Table(title=f"{traj.kernel.name} → {traj.target}", show_lines=False)
    for col in ("stage", "passes", "changed IR", "ms"):
        t.add_column(col, justify="right" if col != "stage" else "left")
    for stage in traj.stages:
        snaps = [s for s in traj.stage_snapshots(stage) if s.stage_index >= 0]
        ms = traj.times.get("stage_ms", {}).get(stage, sum(s.wall_ms for s in snaps))
        t.add_row(stage, str(len(snaps)), str(sum(s.changed for s in snaps)), f"{ms:.1f}")
    total = len(list(traj.passes()))
    t.add_row("total", str(total), str(len(traj.changed_passes())), f"{traj.times.get('capture_s', 0) * 1e3:.1f}",
              style="bold")
    return t


def cmd_dump(a: argparse.Namespace) -> int:
    if a.example:
        from irscope.examples import get_example

        ex = get_example(a.example)
        kernel, args, options = ex.kernel, dict(ex.args), dict(ex.options)
    else:
        if not a.kernel:
            raise SpecError("give FILE.py:KERNEL or --example NAME")
        kernel, args, options = load_kernel(a.kernel), {}, {}
    args.update(_kv(a.arg, "--arg"))
    options.update({k: parse_value(v) for k, v in _kv(a.constexpr, "--constexpr").items()})
    for opt in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        if getattr(a, opt) is not None:
            options[opt] = getattr(a, opt)
    req = build_request(kernel, args, options, a.target, a.config)
    try:
        traj = capture_request(req, out_dir=a.out, disassemble=not a.no_disassemble)
    except CompileError as e:
        console.print(summary_table(e.trajectory))
        err_console.print(f"[red]error:[/red] {e}")
        err_console.print(f"every pass up to the failing one is in {a.out}")
        return 1
    console.print(summary_table(traj))
    res = traj.resources
    facts = [f"{k}={res[k]}" for k in ("registers", "spill_store_bytes", "shared_bytes", "num_warps") if k in res]
    console.print(f"{len(traj.snapshots)} snapshots, {', '.join(facts)} → {a.out}")
    return 0


def cmd_ls(a: argparse.Namespace) -> int:
    traj = load(a.dir)
    t = Table(title=f"{traj.kernel.name} → {traj.target}" + ("" if traj.complete else " (incomplete capture)"))
    for col in ("#", "stage", "pass", "name", "changed", "ms", "lines", "file"):
        t.add_column(col)
    for s in traj.snapshots:
        if a.changed and not s.changed:
            continue
        t.add_row(str(s.index), f"{s.stage}[{s.stage_index}]", s.pass_arg, s.pass_name or "", "●" if s.changed else "",
                  f"{s.wall_ms:.2f}", str(s.text.count("\n")), s.ir_file,
                  style="red" if s.error else None)
    console.print(t)
    if traj.error:
        err_console.print(f"[red]compile failed[/red] in {traj.error.stage} {traj.error.pass_arg or ''}: "
                          f"{traj.error.message.splitlines()[0] if traj.error.message else ''}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="irscope", description=__doc__)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    d = sub.add_parser("dump", help="compile a kernel for a target and record the IR after every pass",
                       description="Compile FILE.py:KERNEL as the JIT would; write every pass's IR to --out.")
    d.add_argument("kernel", nargs="?", help="FILE.py:KERNEL")
    d.add_argument("--example", help="a bundled example instead (irscope.examples)")
    d.add_argument("--target", default="cuda:90", help="cuda:90 (default), cuda:80, hip:gfx942, …")
    d.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="a kernel argument: 4096, 1e-5, true, *fp16 (16-byte aligned pointer), "
                        "*fp16:4 (4-byte aligned), fp32[1024,512] (tensor)")
    d.add_argument("--constexpr", action="append", default=[], metavar="NAME=VALUE")
    d.add_argument("--num-warps", type=int)
    d.add_argument("--num-stages", type=int)
    d.add_argument("--num-ctas", type=int)
    d.add_argument("--maxnreg", type=int)
    d.add_argument("--config", type=int, default=0, help="autotune config index for @triton.autotune kernels")
    d.add_argument("--no-disassemble", action="store_true", help="skip SASS")
    d.add_argument("--out", required=True, type=Path)
    d.set_defaults(func=cmd_dump)

    ls = sub.add_parser("ls", help="list the snapshots of a dump")
    ls.add_argument("dir", type=Path)
    ls.add_argument("--changed", action="store_true", help="only passes that changed the IR")
    ls.set_defaults(func=cmd_ls)

    for register in EXTRA_COMMANDS:
        register(sub)
    return p


# Analysis commands (show, diff, query, report) register here.
EXTRA_COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = []


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    if a.command is None:
        p.print_help()
        return 2
    try:
        return a.func(a)
    except (SpecError, KernelLoadError, TargetError, TrajectoryFormatError, KeyError) as e:
        err_console.print(f"[red]error:[/red] {e.args[0] if isinstance(e, KeyError) else e}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
