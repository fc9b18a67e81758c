"""`patterns`: pattern cards, matching, mechanical appliers, retrospective synthesis.

patterns match --source suite/kernels/softmax.py [--trajectory DIR] [--profile prof.json] [--json]
patterns list | show CARD | validate
patterns apply suite/kernels/new_gelu.py --out cands/ [--check new_gelu]
patterns synthesize history.jsonl [--out DIR] [--llm-model MODEL]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from irscope.argtypes import positive
from irscope.version import add_version_argument
from patterns.card import CARDS_DIR, CardError, load_cards
from patterns.facts import FactsError, KernelFacts
from patterns.matcher import CardIndex, Match, match


class UsageError(ValueError):
    """Bad arguments or input: printed without a traceback, exit status 2."""


def _cards(args: argparse.Namespace) -> CardIndex:
    return CardIndex(load_cards(args.cards))


# --- match ---------------------------------------------------------------------------------------------------


def build_evidence(args: argparse.Namespace) -> KernelFacts:
    if not (args.source or args.trajectory or args.evidence):
        raise UsageError("give the kernel as --source FILE, --trajectory DIR or --evidence JSON")
    ev = KernelFacts()
    if args.evidence:
        try:
            ev = ev.merge(KernelFacts.from_json(json.loads(Path(args.evidence).read_text())))
        except (OSError, json.JSONDecodeError) as e:
            raise UsageError(f"cannot read evidence {args.evidence}: {e}") from e
    if args.trajectory:
        ev = ev.merge(KernelFacts.from_trajectory(args.trajectory, passes=not args.no_passes))
    if args.source:
        kernel = args.kernel or ev.provenance.get("kernel")
        ev = ev.merge(KernelFacts.from_source_file(args.source, kernel))
    if args.profile:
        ev = ev.merge(KernelFacts.from_profile(args.profile))
    if args.target:
        from irscope.targets import parse_target

        ev.target = parse_target(args.target).to_json()
    return ev


def _fmt_value(v: object) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return "?" if v is None else str(v)


def render_match(rank: int, m: Match) -> list[str]:
    c = m.card
    tag = " [blocked]" if m.blocked else ""
    lines = [
        f"{rank}. {c.id} ({c.family}, {c.kind}) score {m.score:g}, confidence {m.confidence:.2f}{tag}",
        f"   {c.title}",
    ]
    for r in m.matched:
        vals = ", ".join(f"{k}={_fmt_value(v)}" for k, v in r.values.items())
        lines.append(f"   + {r.predicate}   [{vals}]")
        for name, locs in r.locations.items():
            shown = "; ".join(str(x) for x in locs[:4]) + (f"; … {len(locs) - 4} more" if len(locs) > 4 else "")
            lines.append(f"       {name}: {shown}")
    for r in m.anti_signals + m.preconditions:
        if (r.role == "anti_signal" and r.outcome) or (r.role == "precondition" and r.outcome is False):
            lines.append(f"   - {r.role} {r.predicate}: {r.why}")
    unknown = [r.predicate for r in m.unknown]
    if unknown:
        lines.append(f"   ? unknown (missing evidence): {'; '.join(unknown)}")
    if c.appliers:
        lines.append(f"   appliers: {', '.join(c.appliers)}")
    return lines


def cmd_match(args: argparse.Namespace) -> int:
    ev = build_evidence(args)
    index = _cards(args)
    try:
        results = match(
            ev, index, family=args.family, include_blocked=args.all, top=args.top, include_proposed=args.proposed
        )
    except KeyError as e:
        raise UsageError(str(e.args[0])) from e
    if args.json:
        print(json.dumps({"evidence": ev.provenance, "matches": [m.to_json() for m in results]}, indent=1, default=str))
        return 0
    where = ", ".join(f"{k}: {v}" for k, v in ev.provenance.items())
    print(f"{len(results)} matching card(s) for {where}")
    for i, m in enumerate(results, 1):
        print("\n".join(render_match(i, m)))
    return 0


# --- cards ---------------------------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    index = _cards(args)
    cards = [
        index.cards[i]
        for fam in index.families()
        for i in index.by_family[fam]
        if args.family is None or fam == args.family
    ]
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": c.id,
                        "family": c.family,
                        "title": c.title,
                        "kind": c.kind,
                        "status": c.status,
                        "appliers": c.appliers,
                    }
                    for c in cards
                ],
                indent=1,
            )
        )
        return 0
    for c in cards:
        print(f"{c.family:<20} {c.id:<28} {c.title}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    index = _cards(args)
    card = index.cards.get(args.card)
    if card is None:
        raise UsageError(f"no card {args.card!r}; `patterns list` shows the cards")
    print(card.path.read_text() if card.path else json.dumps(card.to_json(), indent=1))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    cards = load_cards(args.cards)  # raises CardError listing every problem
    print(f"{len(cards)} card(s) valid in {args.cards}")
    return 0


# --- apply ---------------------------------------------------------------------------------------------------


def cmd_apply(args: argparse.Namespace) -> int:
    from patterns.appliers import APPLIERS, SourceModule, generate
    from patterns.appliers.check import check_candidates

    if args.list:
        for a in APPLIERS.values():
            print(f"{a.name:<22} card {a.card:<24} {a.summary}")
        return 0
    if not args.kernel:
        raise UsageError("give a kernel module: patterns apply suite/kernels/<op>.py")
    path = Path(args.kernel)
    try:
        source = path.read_text()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e}") from e
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a file: give a directory for the candidate modules")
    try:
        cands = generate(source, str(path), args.applier or None, args.max)
    except KeyError as e:
        raise UsageError(str(e.args[0])) from e
    except SyntaxError as e:  # the appliers parse the module: they rewrite valid Python only
        raise UsageError(f"{path}:{e.lineno}: syntax error: {e.msg}; fix it and run again") from e
    ids = [f"{path.stem}.{c.applier}.{i}" for i, c in enumerate(cands)]
    checks = check_candidates(args.check, list(zip(ids, [c.source for c in cands]))) if args.check and cands else {}
    report = []
    for cid, c in zip(ids, cands):
        entry = {"id": cid, **c.to_json()}
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{cid}.py").write_text(c.source)
            entry["file"] = str(out / f"{cid}.py")
        if cid in checks:
            r = checks[cid]
            entry["check"] = {"correct": r.correct, "compiles": r.compiles, "failures": r.failures()}
        report.append(entry)
    if args.out:
        (Path(args.out) / "candidates.json").write_text(json.dumps(report, indent=1))
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        for row in report:
            verdict = ""
            if "check" in row:
                verdict = "  [ok]" if row["check"]["correct"] and row["check"]["compiles"] else "  [FAILED]"
            print(f"{row['id']:<40} {row['description']}{verdict}")
        if not report:
            print(f"no applier applies to {path}")
            mod = SourceModule(source, str(path))
            for name in args.applier or []:  # the appliers asked for by name say why not
                print(f"  {APPLIERS[name].why_not(mod)}")
    return 1 if any("check" in e and not (e["check"]["correct"] and e["check"]["compiles"]) for e in report) else 0


def cmd_check_suite(args: argparse.Namespace) -> int:
    import time

    from patterns.appliers import generate
    from patterns.appliers.check import check_many
    from suite.operator import all_operators

    ops = [op for op in all_operators().values() if op.kernel_path.exists() and (not args.op or op.name in args.op)]
    if args.op and len(ops) != len(set(args.op)):
        raise UsageError(f"unknown operator(s) among {', '.join(args.op)}")
    items = []
    for op in ops:
        items += [
            (f"{op.name}.{c.applier}.{i}", op.name, c.source)
            for i, c in enumerate(generate(op.initial_source(), str(op.kernel_path)))
        ]
    t0 = time.perf_counter()
    results = check_many(
        items,
        workers=args.workers,
        correctness=not args.compile_only,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
    )
    seconds = time.perf_counter() - t0
    failures = {cid: r.failures()[:3] for cid, r in results.items() if not r.ok}
    compiles = sum(len(r.compiled) for r in results.values())
    report = {
        "candidates": len(items),
        "operators": len(ops),
        "seconds": round(seconds, 1),
        "correctness": not args.compile_only,
        "failures": failures,
        "compiles": compiles,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    what = "correct under the interpreter and compile" if not args.compile_only else "compile"
    print(
        f"{len(items) - len(failures)}/{len(items)} candidates for {len(ops)} operators {what} for "
        f"cuda:90 ({compiles} compiles, {seconds:.0f} s)"
    )
    for cid, why in failures.items():
        print(f"FAIL {cid}: {why[0][:300] if why else ''}")
    return 1 if failures else 0


# --- synthesize ----------------------------------------------------------------------------------------------


def cmd_synthesize(args: argparse.Namespace) -> int:
    from patterns.history import HistoryFileError, read_history
    from patterns.synthesis import LLMConfig, synthesize, write_outputs

    try:
        rounds = read_history(args.history)
    except HistoryFileError as e:
        raise UsageError(str(e)) from e
    llm = LLMConfig.from_args(args.llm_model, args.llm_base_url)
    out_dir = Path(args.out) if args.out else Path(args.cards)
    result = synthesize(rounds, load_cards(args.cards), llm)
    written = write_outputs(result, out_dir, Path(args.cards))
    if args.json:
        print(
            json.dumps(
                {**result.to_json(), "written": [str(p) for p in written.files], "skipped": written.skipped},
                indent=1,
                default=str,
            )
        )
        return 0
    for a in result.assignments:
        fams = ", ".join(f"{x.family}/{x.card or 'new'} ({x.method})" for x in a.families)
        print(f"{a.round.op} round {a.round.round}: {fams}")
    for p in written.files:
        print(f"wrote {p}")
    for s in written.skipped:
        print(f"kept {s}")
    return 0


# --- main ----------------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="patterns", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cards", default=str(CARDS_DIR), help="cards directory (default: the bundled cards)")
    add_version_argument(ap)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    m = sub.add_parser("match", help="rank the cards that match a kernel's evidence")
    m.add_argument("--source", help="kernel module (.py)")
    m.add_argument("--kernel", help="the @triton.jit function to analyze (default: the whole module)")
    m.add_argument("--trajectory", help="an irscope trajectory directory")
    m.add_argument("--profile", help="L2 profile facts (JSON)")
    m.add_argument("--evidence", help="an KernelFacts JSON (KernelFacts.to_json)")
    m.add_argument("--target", help="compilation target, e.g. cuda:90 or hip:gfx942")
    m.add_argument("--family", help="only cards of this family")
    m.add_argument("--top", type=positive, help="at most this many matches")
    m.add_argument("--all", action="store_true", help="also list cards whose preconditions fail")
    m.add_argument("--proposed", action="store_true", help="also match proposed (unreviewed) cards")
    m.add_argument("--no-passes", action="store_true", help="skip per-pass attribution (faster)")
    m.add_argument("--json", action="store_true", help="print the matches as JSON")
    m.set_defaults(run=cmd_match)

    p = sub.add_parser("list", help="list the cards")
    p.add_argument("--family", help="only the cards of this family")
    p.add_argument("--json", action="store_true", help="print the cards as JSON")
    p.set_defaults(run=cmd_list)

    p = sub.add_parser("show", help="print one card")
    p.add_argument("card", help="a card id (`patterns list` shows them)")
    p.set_defaults(run=cmd_show)

    p = sub.add_parser("validate", help="validate every card against the schema and the predicate vocabulary")
    p.set_defaults(run=cmd_validate)

    p = sub.add_parser("apply", help="generate candidate modules with the mechanical appliers")
    p.add_argument("kernel", nargs="?", help="a kernel module with forward(*inputs), e.g. suite/kernels/<op>.py")
    p.add_argument("--applier", action="append", help="only this applier (repeatable)")
    p.add_argument("--max", type=positive, help="at most this many candidates per applier")
    p.add_argument("--out", help="write the candidate modules and candidates.json here")
    p.add_argument("--check", metavar="OP", help="check each candidate on operator OP (interpreter + cuda:90 compile)")
    p.add_argument("--list", action="store_true", help="list the appliers")
    p.add_argument("--json", action="store_true", help="print the candidates as JSON")
    p.set_defaults(run=cmd_apply)

    p = sub.add_parser("check-suite", help="check every applier candidate for every suite kernel")
    p.add_argument("--op", action="append", help="only this operator (repeatable)")
    p.add_argument("--compile-only", action="store_true", help="record launches without running them; compile only")
    p.add_argument("--workers", type=positive, default=1, help="process groups side by side")
    p.add_argument("--cache-dir", help="Triton cache for the checks (default: a shared one under the temp dir)")
    p.add_argument("--json", help="write the report here")
    p.set_defaults(run=cmd_check_suite)

    p = sub.add_parser("synthesize", help="map finished rounds to families or propose new cards")
    p.add_argument("history", help="round history as JSONL (docs/patterns.md)")
    p.add_argument("--out", help="where to write index.json, INDEX.md and proposed/ (default: the cards directory)")
    p.add_argument("--llm-model", help="chat model for LLM-assisted synthesis (OPENAI_BASE_URL or --llm-base-url)")
    p.add_argument("--llm-base-url", help="chat-completions endpoint (default: $OPENAI_BASE_URL)")
    p.add_argument("--json", action="store_true", help="print the assignments and written files as JSON")
    p.set_defaults(run=cmd_synthesize)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if args.command is None:
        ap.print_help()
        return 2
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except (UsageError, FactsError, CardError, ValueError) as e:
        print(f"patterns {args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
