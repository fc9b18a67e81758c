"""`irscope`: capture and inspect per-pass trajectories of Triton compiles."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from irscope.backends import adapter_for
from irscope.backends.ascend.environment import AscendEnvironmentError
from irscope.capture import CompileError, SpecError, capture_request
from irscope.capture.arguments import add_specialization_arguments, specialization
from irscope.capture.loader import KernelLoadError, load_kernel
from irscope.capture.specialize import build_request
from irscope.store import TrajectoryFormatError, load
from irscope.targets import TargetError, parse_target
from irscope.trajectory import Trajectory

# Wide tables when piped: pass names are long and truncating them hides the point.
console = Console(width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)


def summary_table(traj: Trajectory) -> Table:
    t = Table(title=f"{traj.kernel.name} → {traj.target}", show_lines=False)
    for col in ("stage", "passes", "changed IR", "ms"):
        t.add_column(col, justify="right" if col != "stage" else "left")
    for stage in traj.stages:
        snaps = [s for s in traj.stage_snapshots(stage) if s.stage_index >= 0]
        ms = traj.times.get("stage_ms", {}).get(stage, sum(s.wall_ms for s in snaps))
        t.add_row(stage, str(len(snaps)), str(sum(s.changed for s in snaps)), f"{ms:.1f}")
    total = len(list(traj.passes()))
    t.add_row(
        "total",
        str(total),
        str(len(traj.changed_passes())),
        f"{traj.times.get('capture_s', 0) * 1e3:.1f}",
        style="bold",
    )
    return t


def _captured(run: Callable[[], Trajectory], out: Path) -> Trajectory | None:
    """The capture's trajectory; on a compile failure, the partial one's table and the compiler's message."""
    try:
        return run()
    except CompileError as e:
        console.print(summary_table(e.trajectory))
        err_console.print(f"[red]error:[/red] {e}")
        err_console.print(f"every pass up to the failing one is in {out}")
        return None


def cmd_dump(a: argparse.Namespace) -> int:
    ascend = parse_target(a.target).backend == "npu"
    if a.example:
        from irscope.examples import get_example

        ex = get_example(a.example)
        kernel, args, options = ex.kernel, dict(ex.args), dict(ex.options)
    else:
        if not a.kernel:
            raise SpecError("give FILE.py:KERNEL or --example NAME")
        # triton-ascend imports the file itself (in its own environment): it may use its language extensions
        kernel, args, options = (a.kernel if ascend else load_kernel(a.kernel)), {}, {}
    given_args, given_options = specialization(a)
    args.update(given_args)
    options.update(given_options)
    if ascend:
        return dump_ascend(a, kernel, args, options)
    req = build_request(kernel, args, options, a.target, a.config)
    traj = _captured(lambda: capture_request(req, out_dir=a.out, disassemble=not a.no_disassemble), a.out)
    if traj is None:
        return 1
    console.print(summary_table(traj))
    res = traj.resources
    facts = [f"{k}={res[k]}" for k in ("registers", "spill_store_bytes", "shared_bytes", "num_warps") if k in res]
    console.print(f"{len(traj.snapshots)} snapshots, {', '.join(facts)} → {a.out}")
    return 0


def dump_ascend(a: argparse.Namespace, kernel: object, args: dict, options: dict) -> int:
    from irscope.backends.ascend.capture import capture_ascend

    traj = _captured(
        lambda: capture_ascend(kernel, args, options, target=a.target, out_dir=a.out, config=a.config), a.out
    )
    if traj is None:
        return 1
    console.print(summary_table(traj))
    console.print(f"{len(traj.snapshots)} snapshots → {a.out}")
    if traj.error is not None:  # only npubin, for want of CANN: everything before it is complete
        err_console.print(
            f"[yellow]note:[/yellow] stage {traj.error.stage} not built, CANN's bishengir-compile "
            f"is not installed ({traj.error.message.splitlines()[0]}); ttir and ttadapter are complete"
        )
    return 0


def cmd_ls(a: argparse.Namespace) -> int:
    traj = load(a.dir)
    t = Table(title=f"{traj.kernel.name} → {traj.target}" + ("" if traj.complete else " (incomplete capture)"))
    for col in ("#", "stage", "pass", "name", "changed", "ms", "lines", "file"):
        t.add_column(col)
    for s in traj.snapshots:
        if a.changed and not s.changed:
            continue
        t.add_row(
            str(s.index),
            f"{s.stage}[{s.stage_index}]",
            s.pass_arg,
            s.pass_name or "",
            "●" if s.changed else "",
            f"{s.wall_ms:.2f}",
            str(s.text.count("\n")),
            s.ir_file,
            style="red" if s.error else None,
        )
    console.print(t)
    if traj.error:
        err_console.print(
            f"[red]compile failed[/red] in {traj.error.stage} {traj.error.pass_arg or ''}: "
            f"{traj.error.message.splitlines()[0] if traj.error.message else ''}"
        )
    return 0


def cmd_show(a: argparse.Namespace) -> int:
    from irscope.report import build_model, terminal

    terminal.show(build_model(load(a.dir)), console)
    return 0


def cmd_diff(a: argparse.Namespace) -> int:
    from irscope.compare import compare

    c = compare(load(a.a), load(a.b))
    head = f"{c.a.kernel.name} ({a.a}) → {c.b.kernel.name} ({a.b})"
    t = Table(title=f"counters: {head}")
    for col in ("counter", "a", "b", "Δ"):
        t.add_column(col, justify="left" if col == "counter" else "right")
    focus = {*adapter_for(c.a.target).focus_stages, *adapter_for(c.b.target).focus_stages}
    for d in c.counters:
        if d.delta and (a.all or d.name.split(".")[0] in focus | {"res"}):
            t.add_row(d.name, f"{d.a:g}", f"{d.b:g}", f"{d.delta:+g}", style="green" if d.delta < 0 else "red")
    console.print(t)
    lt = Table(title="per source line (lines aligned by their text; '-' = not in that kernel)")
    for col in ("line a", "line b", "stage", "source", "changes (a → b)"):
        lt.add_column(col, overflow="fold")
    for ld in c.lines:
        if a.all or ld.stage in focus:
            lt.add_row(
                str(ld.line_a or "-"),
                str(ld.line_b or "-"),
                ld.stage,
                ld.text,
                ", ".join(f"{k} {va}→{vb}" for k, (va, vb) in ld.counters.items()),
            )
    console.print(lt)
    diffs = [p for p in c.passes if p.op != "equal"]
    console.print(
        "pass sequence: "
        + (
            "identical"
            if not diffs
            else "; ".join(f"{p.op}: {' '.join(p.a) or '∅'} → {' '.join(p.b) or '∅'}" for p in diffs)
        )
    )
    if c.changed_only_in_a or c.changed_only_in_b:
        console.print(
            f"changed the IR only in a: {', '.join(c.changed_only_in_a) or '-'}; "
            f"only in b: {', '.join(c.changed_only_in_b) or '-'}"
        )
    return 0


def cmd_query(a: argparse.Namespace) -> int:
    from irscope.graph import build

    traj = load(a.dir)
    g = build(traj)
    if a.what in ("introduced-by", "removed-by"):
        changes = g.introduced_by(a.arg) if a.what == "introduced-by" else g.removed_by(a.arg)
        if not changes:
            console.print(f"no pass {'raised' if a.what == 'introduced-by' else 'lowered'} {a.arg}")
            return 1
        for ch in changes:
            e = ch.edge
            console.print(
                f"#{e.target} {e.stage} [bold]{e.pass_arg}[/bold] ({e.pass_name or '?'}, {e.adder or '-'}): "
                f"{a.arg} {ch.before} → {ch.after}"
            )
    elif a.what == "timeline":
        for i, label, v in g.timeline(a.arg):
            console.print(f"#{i:<4} {label:<60} {v}")
    elif a.what == "line":
        line = int(a.arg)
        src = traj.kernel.source.splitlines()
        console.print(f"line {line}: {src[line - 1].strip() if 0 < line <= len(src) else '?'}")
        for stage in ("ttir", "ttgir", "ttadapter"):
            if stage in traj.stages:
                ops = g.ops_by_line(traj.stage_output(stage).index).get(line, Counter())
                console.print(f"  {stage} ops: " + (", ".join(f"{k}×{v}" for k, v in sorted(ops.items())) or "none"))
        console.print("  passes that changed it:")
        for e, delta in g.passes_touching_line(line):
            moved = ", ".join(f"{k} {v:+d}" for k, v in delta.items())
            console.print(f"  #{e.target} {e.stage} {e.pass_arg}: {moved}")
    elif a.what == "first":
        snap = g.first_where(a.arg)
        if snap is None:
            console.print(f"no snapshot satisfies {a.arg}")
            return 1
        console.print(f"#{snap.index} {snap.stage}[{snap.stage_index}] {snap.pass_arg}")
    return 0


def cmd_report(a: argparse.Namespace) -> int:
    from irscope.report import build_model, comparison, html, markdown

    out = Path(a.output)
    if a.other is not None:
        if out.suffix.lower() == ".md":
            raise ValueError("the comparison of two dumps is an HTML page (-o FILE.html); `irscope diff A B` prints it")
        text = comparison.render(load(a.dir), load(a.other))
        out.write_text(text)
        console.print(f"wrote {out} ({len(text) / 1e6:.2f} MB)")
        return 0
    model = build_model(load(a.dir))
    text = markdown.render(model) if out.suffix.lower() == ".md" else html.render(model, a.focus)
    out.write_text(text)
    console.print(f"wrote {out} ({len(text) / 1e6:.2f} MB)")
    return 0


def register_analysis(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("show", help="summary: passes that changed the IR, key counters, source lines")
    s.add_argument("dir", type=Path)
    s.set_defaults(func=cmd_show)
    d = sub.add_parser("diff", help="compare two dumps: counters per stage and per source line, pass sequences")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    d.add_argument(
        "--all",
        action="store_true",
        help="every stage and counter, not just the backend's main stages (ttgir/ptx/sass/amdgcn; "
        "ttir/ttadapter for Ascend) and resources",
    )
    d.set_defaults(func=cmd_diff)
    q = sub.add_parser(
        "query", help="graph queries: introduced-by NAME, removed-by NAME, timeline NAME, line N, first 'NAME OP N'"
    )
    q.add_argument("dir", type=Path)
    q.add_argument("what", choices=["introduced-by", "removed-by", "timeline", "line", "first"])
    q.add_argument("arg", help="an op (ttg.convert_layout), a counter (sync.shuffle), a line number, or a predicate")
    q.set_defaults(func=cmd_query)
    r = sub.add_parser(
        "report", help="write a self-contained HTML report (or Markdown for -o *.md); of two dumps, a comparison page"
    )
    r.add_argument("dir", type=Path)
    r.add_argument("other", type=Path, nargs="?", help="a second dump: the page compares DIR (A) with it (B)")
    r.add_argument("-o", "--output", required=True)
    r.add_argument("--focus", help="the pass (argument or snapshot index) to open first")
    r.set_defaults(func=cmd_report)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="irscope", description=__doc__)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    d = sub.add_parser(
        "dump",
        help="compile a kernel for a target and record the IR after every pass",
        description="Compile FILE.py:KERNEL as the JIT would; write every pass's IR to --out.",
    )
    d.add_argument("kernel", nargs="?", help="FILE.py:KERNEL")
    d.add_argument("--example", help="a bundled example instead (irscope.examples)")
    add_specialization_arguments(d)
    d.add_argument("--config", type=int, default=0, help="autotune config index for @triton.autotune kernels")
    d.add_argument("--no-disassemble", action="store_true", help="skip SASS")
    d.add_argument("--out", required=True, type=Path)
    d.set_defaults(func=cmd_dump)

    ls = sub.add_parser("ls", help="list the snapshots of a dump")
    ls.add_argument("dir", type=Path)
    ls.add_argument("--changed", action="store_true", help="only passes that changed the IR")
    ls.set_defaults(func=cmd_ls)

    register_analysis(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    if a.command is None:
        p.print_help()
        return 2
    try:
        return a.func(a)
    except (
        SpecError,
        KernelLoadError,
        TargetError,
        TrajectoryFormatError,
        AscendEnvironmentError,
        KeyError,
        ValueError,
    ) as e:
        err_console.print(f"[red]error:[/red] {e.args[0] if isinstance(e, KeyError) else e}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
