"""`irscope`: capture and inspect per-pass trajectories of Triton compiles."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from rich.table import Table
from rich.text import Text

from irscope.argtypes import non_negative
from irscope.backends import BackendAdapter, adapter_for
from irscope.backends.ascend.environment import AscendEnvironmentError
from irscope.capture import CompileError, SpecError, capture_request
from irscope.capture.arguments import add_specialization_arguments, specialization
from irscope.capture.loader import KernelLoadError, load_kernel
from irscope.capture.specialize import build_request
from irscope.capture.stagetable import stage_rows
from irscope.interop import commands as interop
from irscope.store import OutputDirError, TrajectoryFormatError, load
from irscope.targets import Target, TargetError, parse_target
from irscope.terminal import console, err_console
from irscope.trajectory import Trajectory
from irscope.version import add_version_argument


def error(message: str) -> None:
    """One line on stderr: unwrapped (tests and scripts read it whole), the message's brackets kept verbatim."""
    err_console.print(Text.assemble(("error:", "red"), " ", message), soft_wrap=True)


def summary_table(traj: Trajectory) -> Table:
    t = Table(title=f"{traj.kernel.name} → {traj.target}", show_lines=False)
    for col in ("stage", "passes", "changed IR", "ms", ""):
        t.add_column(col, justify="left" if col in ("stage", "") else "right")
    for r in stage_rows(traj):
        passes, changed = ("" if v is None else str(v) for v in (r.passes, r.changed))
        t.add_row(r.stage, passes, changed, "-" if r.ms is None else f"{r.ms:.1f}", r.note)
    total = len(list(traj.passes()))
    t.add_row(
        "total",
        str(total),
        str(len(traj.changed_passes())),
        f"{traj.times.get('capture_s', 0) * 1e3:.1f}",
        "",
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
    target = parse_target(a.target)
    adapter = adapter_for(target)
    if a.example:
        from irscope.examples import get_example

        ex = get_example(a.example)
        kernel, args, options = ex.kernel, dict(ex.args), dict(ex.options)
    else:
        if not a.kernel:
            raise SpecError("give FILE.py:KERNEL or --example NAME")
        # a backend compiling in its own process imports the file itself (triton-ascend: its language extensions)
        kernel, args, options = (a.kernel if adapter.own_capture else load_kernel(a.kernel)), {}, {}
    given_args, given_options = specialization(a)
    args.update(given_args)
    options.update(given_options)
    if adapter.own_capture:
        return dump_own(a, adapter, target, kernel, args, options)
    req = build_request(kernel, args, options, target, a.config)
    traj = _captured(lambda: capture_request(req, out_dir=a.out, disassemble=not a.no_disassemble), a.out)
    if traj is None:
        return 1
    console.print(summary_table(traj))
    res = traj.resources
    facts = [f"{k}={res[k]}" for k in ("registers", "spill_store_bytes", "shared_bytes", "num_warps") if k in res]
    console.print(f"{len(traj.snapshots)} snapshots, {', '.join(facts)} → {a.out}")
    return 0


def dump_own(
    a: argparse.Namespace, adapter: BackendAdapter, target: Target, kernel: object, args: dict, options: dict
) -> int:
    """A backend's own capture path (Ascend)."""
    traj = _captured(lambda: adapter.capture(kernel, args, options, target, a.out, a.config), a.out)
    if traj is None:
        return 1
    console.print(summary_table(traj))
    console.print(f"{len(traj.snapshots)} snapshots → {a.out}")
    if note := adapter.capture_note(traj):
        err_console.print(f"[yellow]note:[/yellow] {note}")
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


def _print_json(doc: object) -> None:
    sys.stdout.write(json.dumps(doc, indent=1, default=str) + "\n")


def cmd_show(a: argparse.Namespace) -> int:
    from irscope.report import build_model, terminal
    from irscope.views import show_json

    model = build_model(load(a.dir))
    if a.json:
        _print_json(show_json(model))
    else:
        terminal.show(model, console)
    return 0


def cmd_diff(a: argparse.Namespace) -> int:
    from irscope.compare import compare
    from irscope.views import comparable, diff_json, partial_note

    c = compare(load(a.a), load(a.b))
    if a.json:
        _print_json(diff_json(c))
        return 0
    for traj, side, path in ((c.a, "a", a.a), (c.b, "b", a.b)):
        note = partial_note(traj, f"{side} ({path})")
        if note:
            err_console.print(Text.assemble(("warning:", "yellow"), " ", note), soft_wrap=True)
    left_out = sorted({d.name.split(".")[0] for d in c.counters if not comparable(c, d.name.split(".")[0])})
    # a stage one side never ran (a what-if compiled from a later stage's IR) is not a failure
    one_sided = [p for p in left_out if (p in c.a.stages) != (p in c.b.stages)]
    unfinished = [p for p in left_out if p not in one_sided]
    if one_sided:
        err_console.print(
            Text.assemble(("note:", "cyan"), f" not compared: {', '.join(one_sided)} (a stage only one side ran)"),
            soft_wrap=True,
        )
    if unfinished:
        err_console.print(
            Text.assemble(
                ("warning:", "yellow"),
                f" not compared: {', '.join(unfinished)} (not finished in both; their deltas would describe the "
                "failure, not the kernels)",
            ),
            soft_wrap=True,
        )
    head = f"{c.a.kernel.name} ({a.a}) → {c.b.kernel.name} ({a.b})"
    t = Table(title=f"counters: {head}")
    for col in ("counter", "a", "b", "Δ"):
        t.add_column(col, justify="left" if col == "counter" else "right")
    focus = {*adapter_for(c.a.target).focus_stages, *adapter_for(c.b.target).focus_stages}
    for d in c.counters:
        stage = d.name.split(".")[0]
        if d.delta and comparable(c, stage) and (a.all or stage in focus | {"res"}):
            t.add_row(d.name, f"{d.a:g}", f"{d.b:g}", f"{d.delta:+g}", style="green" if d.delta < 0 else "red")
    console.print(t)
    lt = Table(title="per source line (lines aligned by their text; '-' = not in that kernel)")
    for col in ("line a", "line b", "stage", "source", "changes (a → b)"):
        lt.add_column(col, overflow="fold")
    for ld in c.lines:
        if comparable(c, ld.stage) and (a.all or ld.stage in focus):
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


def query(a: argparse.Namespace) -> tuple[object, list[str], bool]:
    """(the answer as JSON, the same as text lines, whether something was found) of `irscope query`."""
    from irscope.graph import build
    from irscope.views import change_json

    traj = load(a.dir)
    g = build(traj)
    if a.what in ("introduced-by", "removed-by"):
        changes = g.introduced_by(a.arg) if a.what == "introduced-by" else g.removed_by(a.arg)
        if not changes:
            return [], [f"no pass {'raised' if a.what == 'introduced-by' else 'lowered'} {a.arg}"], False
        text = [
            f"#{ch.edge.target} {ch.edge.stage} [bold]{ch.edge.pass_arg}[/bold] ({ch.edge.pass_name or '?'}, "
            f"{ch.edge.adder or '-'}): {a.arg} {ch.before} → {ch.after}"
            for ch in changes
        ]
        return [change_json(ch) for ch in changes], text, True
    if a.what == "timeline":
        points = g.timeline(a.arg)
        return (
            [{"snapshot": i, "label": label, "value": v} for i, label, v in points],
            [f"#{i:<4} {label:<60} {v}" for i, label, v in points],
            True,
        )
    if a.what == "line":
        try:
            line = int(a.arg)
        except ValueError:
            raise ValueError(f"query line: {a.arg!r} is not a line number") from None
        src = traj.kernel.source.splitlines()
        source = src[line - 1].strip() if 0 < line <= len(src) else None
        ops = {
            stage: dict(sorted(g.ops_by_line(traj.stage_output(stage).index).get(line, Counter()).items()))
            for stage in ("ttir", "ttgir", "ttadapter")
            if stage in traj.stages
        }
        touching = g.passes_touching_line(line)
        text = [f"line {line}: {source or '?'}"]
        text += [f"  {st} ops: " + (", ".join(f"{k}×{v}" for k, v in o.items()) or "none") for st, o in ops.items()]
        text.append("  passes that changed it:")
        text += [
            f"  #{e.target} {e.stage} {e.pass_arg}: {', '.join(f'{k} {v:+d}' for k, v in delta.items())}"
            for e, delta in touching
        ]
        doc = {
            "line": line,
            "source": source,
            "ops": ops,
            "passes": [
                {"snapshot": e.target, "stage": e.stage, "pass_arg": e.pass_arg, "deltas": d} for e, d in touching
            ],
        }
        return doc, text, True
    snap = g.first_where(a.arg)
    if snap is None:
        return None, [f"no snapshot satisfies {a.arg}"], False
    doc = {"snapshot": snap.index, "stage": snap.stage, "stage_index": snap.stage_index, "pass_arg": snap.pass_arg}
    return doc, [f"#{snap.index} {snap.stage}[{snap.stage_index}] {snap.pass_arg}"], True


def cmd_query(a: argparse.Namespace) -> int:
    doc, text, found = query(a)
    if a.json:
        _print_json(doc)
    else:
        for line in text:
            console.print(line)
    return 0 if found else 1


def cmd_report(a: argparse.Namespace) -> int:
    from irscope.report import build_model, comparison, html, markdown

    out: Path = a.output
    if out.is_dir():
        raise OutputDirError(f"-o {out} is a directory: give the report's file name, e.g. {out / 'report.html'}")
    out.parent.mkdir(parents=True, exist_ok=True)
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


DIR_HELP = "a trajectory directory (the --out of `irscope dump`)"
JSON_HELP = "print the result as JSON"


def register_analysis(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("show", help="summary: passes that changed the IR, key counters, source lines")
    s.add_argument("dir", type=Path, help=DIR_HELP)
    s.add_argument("--json", action="store_true", help=JSON_HELP)
    s.set_defaults(func=cmd_show)
    d = sub.add_parser("diff", help="compare two dumps: counters per stage and per source line, pass sequences")
    d.add_argument("a", type=Path, help="the first trajectory directory (the base)")
    d.add_argument("b", type=Path, help="the second trajectory directory (compared with a)")
    d.add_argument(
        "--all",
        action="store_true",
        help="every stage and counter, not just the backend's main stages (ttgir/ptx/sass/amdgcn; "
        "ttir/ttadapter for Ascend) and resources",
    )
    d.add_argument("--json", action="store_true", help=JSON_HELP + " (every stage and counter)")
    d.set_defaults(func=cmd_diff)
    q = sub.add_parser(
        "query", help="graph queries: introduced-by NAME, removed-by NAME, timeline NAME, line N, first 'NAME OP N'"
    )
    q.add_argument("dir", type=Path, help=DIR_HELP)
    q.add_argument("what", choices=["introduced-by", "removed-by", "timeline", "line", "first"], help="the question")
    q.add_argument("arg", help="an op (ttg.convert_layout), a counter (sync.shuffle), a line number, or a predicate")
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q.set_defaults(func=cmd_query)
    r = sub.add_parser(
        "report", help="write a self-contained HTML report (or Markdown for -o *.md); of two dumps, a comparison page"
    )
    r.add_argument("dir", type=Path, help=DIR_HELP)
    r.add_argument("other", type=Path, nargs="?", help="a second dump: the page compares DIR (A) with it (B)")
    r.add_argument(
        "-o", "--output", required=True, type=Path, help="the report file (.html, or .md); missing folders are created"
    )
    r.add_argument("--focus", help="the pass (argument or snapshot index) to open first")
    r.set_defaults(func=cmd_report)


# -- what-if compiles and pass replay (irscope.whatif, irscope.replay) --------------------------------------------
def cmd_whatif(a: argparse.Namespace) -> int:
    from irscope.whatif import whatif

    w = whatif(
        load(a.dir),
        arg_attrs=a.arg_attr,
        options=a.option,
        constexprs=a.constexpr,
        dot_precision=a.dot_precision,
        start=a.start,
        out_dir=a.out,
        disassemble=not a.no_disassemble,
    )
    console.print(f"what-if of {a.dir}, compiled from {w.start}:")
    for line in w.describe():
        console.print(f"  {line}")
    cmd_diff(argparse.Namespace(a=a.dir, b=a.out, all=a.all, json=False))
    console.print(f"{len(w.trajectory.snapshots)} snapshots → {a.out}")
    return 0


def cmd_replay(a: argparse.Namespace) -> int:
    from irscope.replay import replay

    traj = load(a.dir)
    r = replay(traj, a.pass_, a.out or a.dir / "replay")
    console.print(
        f"pass {r.snapshot.label} ({r.snapshot.pass_name or '?'}): {r.adder}(pm, {', '.join(map(repr, r.arguments))})"
    )
    console.print(f"  input     {r.input_file} (snapshot #{r.before.index}, {r.before.label})")
    console.print(f"  expected  {r.expected_file} (snapshot #{r.snapshot.index})")
    console.print(f"  output    {r.output_file}")
    console.print(f"  pipeline  {r.pipeline}")
    console.print(f"  rerun     {r.opt_command()}")
    console.print(
        f"  target {traj.target}, options {r.options}; Triton {traj.versions.get('triton', '?')} at capture, "
        f"{r.triton_version} now"
    )
    if r.diagnostics.strip():
        console.print(f"  the pass printed:\n{r.diagnostics.rstrip()}")
    if not r.ok:
        err_console.print(f"[red]not reproduced:[/red] the pass alone gives a different module\n{r.diff}")
        return 1
    console.print(f"reproduced: {r.reproduced}")
    return 0


def register_whatif(sub: argparse._SubParsersAction) -> None:
    w = sub.add_parser(
        "whatif",
        help="recompile a dump with an argument attribute, option, constexpr or dot precision changed; diff against it",
        description="Edit the captured IR of one stage (or re-specialize from source for constexprs), compile the "
        "rest of the pipeline with per-pass capture into --out, and show the diff against DIR.",
    )
    w.add_argument("dir", type=Path, help="the dump to start from (irscope dump --out DIR)")
    w.add_argument("--arg-attr", action="append", default=[], metavar="NAME:ATTR=V", help="e.g. lda:divisibility=16")
    w.add_argument("--option", action="append", default=[], metavar="NAME=V", help="e.g. num_stages=4, maxnreg=128")
    w.add_argument(
        "--constexpr", action="append", default=[], metavar="NAME=V", help="re-specialize from source, e.g. BLOCK_M=64"
    )
    w.add_argument(
        "--dot-precision",
        metavar="P",
        help="inputPrecision of every tt.dot in the ttir: tf32, tf32x3, ieee, bf16x3, bf16x6",
    )
    w.add_argument("--from", dest="start", choices=["ttir", "ttgir"], default="ttir", help="stage output to edit")
    w.add_argument("--all", action="store_true", help="every stage and counter in the diff")
    w.add_argument("--no-disassemble", action="store_true", help="skip SASS")
    w.add_argument("--out", required=True, type=Path, help="where the what-if trajectory is written")
    w.set_defaults(func=cmd_whatif)
    r = sub.add_parser(
        "replay",
        help="run one captured pass alone on its captured input and check it reproduces the captured output",
    )
    r.add_argument("dir", type=Path, help="the dump whose pass is replayed")
    r.add_argument("--pass", dest="pass_", required=True, help="snapshot index, stage[i] or pass name")
    r.add_argument("--out", type=Path, help="where the input/expected/output files go (default DIR/replay)")
    r.set_defaults(func=cmd_replay)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="irscope", description=__doc__)
    add_version_argument(p)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    d = sub.add_parser(
        "dump",
        help="compile a kernel for a target and record the IR after every pass",
        description="Compile FILE.py:KERNEL as the JIT would; write every pass's IR to --out.",
    )
    d.add_argument("kernel", nargs="?", help="FILE.py:KERNEL")
    d.add_argument("--example", help="a bundled example instead (irscope.examples)")
    add_specialization_arguments(d)
    d.add_argument("--config", type=non_negative, default=0, help="autotune config index for @triton.autotune kernels")
    d.add_argument("--no-disassemble", action="store_true", help="skip SASS")
    d.add_argument(
        "--out",
        required=True,
        type=Path,
        help="the trajectory directory: new, empty, or an older trajectory's (replaced when the capture finishes)",
    )
    d.set_defaults(func=cmd_dump)

    ls = sub.add_parser("ls", help="list the snapshots of a dump")
    ls.add_argument("dir", type=Path, help=DIR_HELP)
    ls.add_argument("--changed", action="store_true", help="only passes that changed the IR")
    ls.set_defaults(func=cmd_ls)

    register_analysis(sub)
    register_whatif(sub)
    interop.register(sub)
    # listed for --help; `main` hands its arguments to the server's own parser
    sub.add_parser("mcp", add_help=False, help="serve the tools to a coding agent over MCP (docs/mcp.md)")
    return p


def cmd_mcp(args: list[str]) -> int:
    # The server sits above the ladder in the layer order, so irscope finds it at run time, not by import; it
    # says itself when the mcp extra is missing.
    try:
        server = importlib.import_module("mcp_server.cli")
    except ModuleNotFoundError as e:
        err_console.print(f"[red]error:[/red] irscope mcp: {e}; reinstall irscope (pip install -e '.[mcp]')")
        return 2
    return int(server.main(args))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mcp"]:
        return cmd_mcp(argv[1:])
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
        OutputDirError,
        AscendEnvironmentError,
        KeyError,
        ValueError,
    ) as e:
        error(str(e.args[0] if isinstance(e, KeyError) else e))
        return 2
    except OSError as e:  # a file the command reads or writes: named with the system's reason
        error(f"{e.filename}: {e.strerror}" if e.filename else str(e))
        return 2


if __name__ == "__main__":
    sys.exit(main())
