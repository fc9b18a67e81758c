"""`compiler-index`: build the index of Triton's compiler source and ask it why the compiler did what it did.

    compiler-index fetch --triton-version 3.6.0 --into third_party/triton
    compiler-index build --source third_party/triton --db out/compiler-index.db
    compiler-index build --source DIR --backend libclang --compile-commands BUILD/compile_commands.json
    compiler-index pass tritongpu-remove-layout-conversions
    compiler-index creators ttg.convert_layout
    compiler-index conditions BlockedToMMA
    compiler-index remarks "vectorization fails"
    compiler-index explain out/top2 --pass 11

Every query prints file:line with the source line; `--json` prints the result as JSON. The database defaults to
$COMPILER_INDEX_DB or out/compiler-index.db.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from typing import Any

from compiler_index import queries, render
from compiler_index.fetch import FetchError
from compiler_index.sources import SourceError
from compiler_index.store import IndexDbError
from irscope.argtypes import non_negative, positive
from irscope.targets import TargetError
from irscope.version import add_version_argument

DEFAULT_DB = "out/compiler-index.db"


def _db_default() -> str:
    return os.environ.get("COMPILER_INDEX_DB", DEFAULT_DB)


def _emit(args: argparse.Namespace, result: Any, text: Callable[[Any], str]) -> None:
    if args.json:
        json.dump(queries.to_json(result), sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text(result))


GET_SOURCES = (
    "get Triton's source with `compiler-index fetch --triton-version 3.6.0 --into third_party/triton` "
    "(third_party/README.md: other ways without GitHub), then `compiler-index build --source third_party/triton`"
)


def cmd_build(args: argparse.Namespace) -> int:
    from compiler_index.build import build, resolve_roots

    if not args.source and not args.pipeline:
        # the installed Triton's pipeline alone is two Python files: no pass, op, pattern or gate to query
        raise SourceError(f"no compiler sources to index (no --source); {GET_SOURCES}")
    roots = resolve_roots(args.source, [] if args.no_pipeline else (args.pipeline or None))
    backend = args.backend or ("libclang" if args.compile_commands else "tree-sitter")
    report = build(
        args.db,
        roots,
        jobs=args.jobs,
        rebuild=args.rebuild,
        progress=not args.quiet and not args.json and sys.stderr.isatty(),
        backend=backend,
        compile_commands=args.compile_commands,
    )
    _emit(args, report.to_json() if args.json else report, render.build_report)
    return 1 if report.errors else 0


def cmd_fetch(args: argparse.Namespace) -> int:
    from compiler_index.fetch import fetch

    result = fetch(args.triton_version, args.into, url=args.url)
    _emit(
        args,
        result,
        lambda r: f"{r.path}: Triton {r.version} ({r.branch} {r.commit[:12] or 'no git'}), {r.seconds:.1f} s\n",
    )
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from compiler_index.store import get_meta, open_index

    con = open_index(args.db)
    try:
        counts = {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in (
                "files",
                "functions",
                "classes",
                "calls",
                "op_sites",
                "gates",
                "td_passes",
                "td_ops",
                "patterns",
                "adders",
                "pipeline_steps",
            )
        }
        counts["calls resolved by libclang"] = con.execute(
            "SELECT count(*) FROM calls WHERE target_usr IS NOT NULL"
        ).fetchone()[0]
        backends = dict(con.execute("SELECT backend, count(*) FROM files GROUP BY backend").fetchall())
        info = {"db": args.db, "meta": get_meta(con), "counts": counts, "files_by_backend": backends}
    finally:
        con.close()
    _emit(
        args,
        info,
        lambda i: (
            "\n".join(
                [f"{i['db']}"]
                + [f"  {k}: {v}" for k, v in i["meta"].items()]
                + [f"  {k}: {v}" for k, v in i["counts"].items()]
                + [f"  files read by {k}: {v}" for k, v in i["files_by_backend"].items()]
            )
            + "\n"
        ),
    )
    return 0


def cmd_pass(args: argparse.Namespace) -> int:
    _emit(args, queries.pass_info(args.db, args.name), render.passes)
    return 0


def cmd_sites(args: argparse.Namespace) -> int:
    find = queries.creators if args.command == "creators" else queries.erasers
    _emit(args, find(args.db, args.op, depth=args.depth), render.op_sites)
    return 0


def cmd_conditions(args: argparse.Namespace) -> int:
    result = queries.conditions(args.db, args.symbol, callee_depth=1 if args.callees else 0, target=args.target)
    _emit(args, result, render.conditions)
    return 0


def cmd_remarks(args: argparse.Namespace) -> int:
    _emit(args, queries.remarks(args.db, args.text, limit=args.limit), render.remarks)
    return 0


def cmd_edges(args: argparse.Namespace) -> int:
    find = queries.callers if args.command == "callers" else queries.callees
    _emit(args, find(args.db, args.symbol), lambda r: render.edges(r, args.command))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    _emit(args, queries.search(args.db, args.text, limit=args.limit), render.search)
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from compiler_index.explain import explain
    from irscope.store import TrajectoryFormatError

    try:
        result = explain(args.db, args.trajectory, args.pass_ref, depth=args.depth)
    except TrajectoryFormatError as e:
        raise queries.QueryError(str(e)) from None
    _emit(args, result, lambda r: render.explanation(r, render.NO_LIMITS if args.all else render.DEFAULT_LIMITS))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="compiler-index", description=__doc__.split("\n\n")[0])
    add_version_argument(p)
    sub = p.add_subparsers(dest="command", required=True)

    def add(name: str, fn: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_text, description=help_text)
        sp.add_argument("--db", default=_db_default(), help=f"index database (default: {_db_default()})")
        sp.add_argument("--json", action="store_true", help="print the result as JSON")
        sp.set_defaults(fn=fn)
        return sp

    b = add("build", cmd_build, "index C++, TableGen and the installed Triton's pass pipeline")
    b.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="DIR",
        help="a Triton checkout (narrowed to its compiler code) or any C++/TableGen tree; repeatable",
    )
    b.add_argument(
        "--pipeline",
        action="append",
        metavar="DIR",
        help="a Triton package directory with backends/*/compiler.py (default: the installed triton)",
    )
    b.add_argument("--no-pipeline", action="store_true", help="index no Python pipeline")
    b.add_argument("--jobs", type=non_negative, default=0, help="extraction processes (default 0: up to 2)")
    b.add_argument("--rebuild", action="store_true", help="discard the existing database first")
    b.add_argument("--quiet", action="store_true", help="no progress display")
    b.add_argument(
        "--backend",
        choices=["tree-sitter", "libclang", "auto"],
        help="what reads the C++ files a compilation database lists: libclang (precise: resolved calls, "
        "types, overloads), tree-sitter (no build needed), auto (libclang when a "
        "compile_commands.json is given or in a source root); default: tree-sitter, or libclang "
        "with --compile-commands",
    )
    b.add_argument(
        "--compile-commands",
        metavar="PATH",
        help="compile_commands.json (or its directory) for the libclang backend; files it does not list "
        "are read by tree-sitter",
    )

    f = add("fetch", cmd_fetch, "clone the Triton release branch of a version (needs GitHub)")
    f.add_argument("--triton-version", default="3.6.0", help="the release to fetch (default: %(default)s)")
    f.add_argument("--into", default="third_party/triton", help="where to clone it (default: %(default)s)")
    f.add_argument("--url", default="https://github.com/triton-lang/triton.git", help=argparse.SUPPRESS)

    add("info", cmd_info, "what the index holds")
    add("pass", cmd_pass, "a pass: .td definition, C++ class, Python adder, pipeline positions, patterns").add_argument(
        "name", help="pass argument, TableGen def, C++ class or adder (add_x, passes.ttgpuir.add_x)"
    )
    for name, what in (
        ("creators", "code that creates op OP (directly and through callers)"),
        ("erasers", "code that removes op OP"),
    ):
        sp = add(name, cmd_sites, what)
        sp.add_argument("op", help="op name (ttg.convert_layout), TableGen def or C++ class")
        sp.add_argument("--depth", type=non_negative, default=queries.CALL_DEPTH, help="callers to follow (default: 3)")
    c = add("conditions", cmd_conditions, "gating conditions of a pattern, class, function or pass")
    c.add_argument("symbol", help="a pattern, class, function or pass (BlockedToMMA, tritongpu-accelerate-matmul)")
    c.add_argument("--callees", action="store_true", help="also the gates of the functions it calls")
    c.add_argument(
        "--target",
        help="cuda:90, hip:gfx942, …: leave out the gates whose guards contradict it (version == 5 on sm_90, "
        "AMD-only files on CUDA, …)",
    )
    r = add("remarks", cmd_remarks, "which code emits a remark, warning, error or debug message")
    r.add_argument("text", help="the message as seen (values and location prefix may stay), or part of it")
    r.add_argument("--limit", type=positive, default=10, help="at most this many emitters")
    for name in ("callers", "callees"):
        add(name, cmd_edges, f"{name} of a function or of all methods of a class").add_argument(
            "symbol", help="a function or class name, qualified or not"
        )
    s = add("search", cmd_search, "full-text search over code, messages, TableGen and pipelines")
    s.add_argument("text", help="words to find (all of them first, else any; WORD* matches a prefix)")
    s.add_argument("--limit", type=positive, default=20, help="at most this many hits")
    e = add("explain", cmd_explain, "the code of pass N that created/erased the ops whose counts changed there")
    e.add_argument("trajectory", help="an irscope trajectory directory")
    e.add_argument(
        "--pass",
        dest="pass_ref",
        required=True,
        help="snapshot index, stage[i], pass argument or adder (see `irscope ls`)",
    )
    e.add_argument(
        "--depth", type=non_negative, default=queries.CALL_DEPTH, help="callers to follow from each site (default: 3)"
    )
    e.add_argument(
        "--all", action="store_true", help="every op, site, call path, gate and emitter (default: the first few)"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.fn(args)
    except (IndexDbError, queries.QueryError, SourceError, FetchError, TargetError, sqlite3.DatabaseError) as e:
        hint = _no_sources_hint(args.db) if isinstance(e, queries.QueryError) else ""
        print(f"compiler-index {args.command}: error: {e}{hint}", file=sys.stderr)
        return 2


def _no_sources_hint(db: str) -> str:
    """Why a query found nothing when the index holds no compiler source (built without --source)."""
    from compiler_index.store import open_index

    try:
        con = open_index(db)
    except IndexDbError:
        return ""
    try:
        indexed = (
            con.execute("SELECT count(*) FROM td_passes").fetchone()[0]
            + con.execute("SELECT count(*) FROM functions").fetchone()[0]
        )
    finally:
        con.close()
    return "" if indexed else f"; the index {db} holds no compiler sources: {GET_SOURCES}"


if __name__ == "__main__":
    sys.exit(main())
