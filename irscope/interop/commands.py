"""`irscope export` and `irscope import`: trajectories to and from other tools' traces (tritonparse's)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table
from rich.text import Text

from irscope.store import OutputDirError, load
from irscope.terminal import console, err_console

FORMATS = ("tritonparse",)


def _note(message: str) -> None:
    err_console.print(Text.assemble(("note:", "cyan"), " ", message), soft_wrap=True)


def cmd_export(a: argparse.Namespace) -> int:
    from irscope.interop.tritonparse.exporter import export

    out: Path = a.output
    if out.is_dir():
        raise OutputDirError(f"-o {out} is a directory: give the trace's file name, e.g. {out / 'trace.ndjson.gz'}")
    written = export((load(d) for d in a.dirs), out, stages_only=a.stages_only)
    for d, info in zip(a.dirs, written):
        carried = f"{info.passes} snapshots" if info.passes else "counters only (--stages-only)"
        console.print(f"{d}: {info.kernel}: stages {' '.join(info.stages)}; irscope field: {carried}", soft_wrap=True)
        for n in info.notes:
            _note(f"{d}: {n}")
    console.print(
        f"wrote {out} ({len(written)} compilation{'s' if len(written) != 1 else ''}); tritonparse reads it as its "
        f"own: its viewer opens it, `tritonparseoss parse {out}` maps it again"
    )
    return 0


def cmd_import(a: argparse.Namespace) -> int:
    from irscope.interop.tritonparse.importer import import_trace

    r = import_trace(a.trace, a.out, recapture=a.recapture, say=lambda m: err_console.print(m, soft_wrap=True))
    t = Table(title=f"{a.trace} → {a.out}")
    for col in ("line", "kernel", "stages", "trajectory", "per pass"):
        t.add_column(col, overflow="fold")
    for k in r.kernels:
        if k.per_pass:
            per_pass = "every pass (irscope's field)"
        elif k.recaptured:
            per_pass = f"{k.recaptured}: {k.recapture_note}"
        elif k.recapture_note:
            per_pass = k.recapture_note
        else:
            per_pass = "stage level; " + ("--recapture captures it" if k.recapture else f"no recapture: {k.why_not}")
        t.add_row(str(k.line), k.kernel, " ".join(k.stages), str(k.directory), per_pass)
    console.print(t)
    offers = [k for k in r.kernels if k.recapture and not k.recaptured and not k.recapture_note]
    if offers:
        console.print(
            f"per pass on this machine (no GPU): irscope import {a.trace} --out {a.out} --recapture; or one kernel:",
            soft_wrap=True,
        )
        for k in offers[:3]:
            console.print(f"  {k.command()}", soft_wrap=True, markup=False)
        if len(offers) > 3:
            console.print(f"  … {len(offers) - 3} more in {a.out}/import.json")
        console.print(
            f"and the diagnosis ladder on it:\n  {offers[0].diagnose_command()}", soft_wrap=True, markup=False
        )
    for n in r.notes:
        _note(n)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser(
        "export",
        help="write trajectories as a tritonparse trace (its parser and viewer read it; irscope import restores it)",
        description="Write each trajectory as a compilation record of a tritonparse trace: its stages, source, "
        "source mappings and metadata where tritonparse keeps them, every pass's snapshot and the counters in the "
        "record's `irscope` field (docs/tritonparse.md).",
    )
    e.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="trajectory directories (irscope dump --out)")
    e.add_argument("--format", choices=FORMATS, default="tritonparse", help="the trace format (default %(default)s)")
    e.add_argument("-o", "--output", required=True, type=Path, help="the trace: FILE.ndjson, or FILE.ndjson.gz (gzip)")
    e.add_argument(
        "--stages-only",
        action="store_true",
        help="leave the per-pass snapshots out of the irscope field (a smaller file; tritonparse sees the same)",
    )
    e.set_defaults(func=cmd_export)
    i = sub.add_parser(
        "import",
        help="turn each compilation of a tritonparse trace into a trajectory (stage level, or every pass)",
        description="Read a tritonparse trace (NDJSON, plain or gzip, raw or parsed) one record at a time and write "
        "one trajectory per compilation into --out: every pass when irscope exported it, else one snapshot per "
        "stage. `show`, `diff`, `query`, `report` and the MCP tools read them (docs/tritonparse.md).",
    )
    i.add_argument("trace", type=Path, help="the trace: *.ndjson, *.ndjson.gz, *_mapped.ndjson.gz")
    i.add_argument("--format", choices=FORMATS, default="tritonparse", help="the trace format (default %(default)s)")
    i.add_argument(
        "--out", required=True, type=Path, help="a new or empty directory (or an earlier import's, replaced)"
    )
    i.add_argument(
        "--recapture",
        action="store_true",
        help="also capture each kernel per pass on this machine (no GPU) from the trace's own source and "
        "specialization, into DIR/NNN-KERNEL.passes, and say whether its stages equal the trace's",
    )
    i.set_defaults(func=cmd_import)
