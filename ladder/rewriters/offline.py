"""The offline rewriter: the mechanical pattern appliers (patterns.appliers) in place of an LLM.

A round's candidate comes from the rewrite family the diagnosis settled on:
  1. the curated cards of that family: cards whose `family` is the name, or that list it among their `aliases`
     (L2 names its families fuse-passes, raise-memory-parallelism, …); the cards the diagnosis cited come first,
     in its order, then the others by id;
  2. the cards sharing one of those cards' aliases (vectorization's `widen-memory-access` joins block-size-warps);
  3. the appliers these cards name, each run on the round's base kernel (`patterns.appliers.generate`).
If that gives no candidate this operator has not tried yet (PastRound.candidate digests), it falls back to every
applier in registry order (the tunable families: launch configuration, autotune, hints, cache hints, …) and says so:
the Rewrite's description starts "fallback: the diagnosed family X has no mechanical applier" (or "… its
mechanical candidates were all tried") and its family is the applied card's. Without a diagnosis (--no-ladder)
every applier is in play. When nothing untried is left, the Rewrite has no source and its attempt finishes with
records.NOTHING_LEFT: the loop records the round invalid and stops the operator (the next round would be the same).

When L4 confirmed a compile-time condition with a what-if compile (Hypothesis.counterfactual), the candidates
that realize it come first: a divisibility condition becomes `tl.multiple_of` hints on the named arguments at
the top of the kernel; an option or constexpr condition promotes the appliers' candidates that set exactly
those values (a launch's num_stages, a BLOCK size); a dot-precision condition becomes `input_precision="tf32"`
on the tl.dot calls at the hazard's lines, only when the operator's tolerance admits TF32's rounding (else the
round's offline-candidates.json says why it was not realized). The same gate holds for every candidate that sets
a dot's input_precision (the dot_precision applier's): one whose rounding the tolerance cannot absorb is dropped,
and offline-candidates.json's `refused_by_tolerance` says why.

Every candidate considered, and which one was chosen, goes to the round's offline-candidates.json.
"""

from __future__ import annotations

import argparse
import ast
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from irscope.hazards.plan import HINT, PRECISION
from ladder.context import digest
from ladder.policy import Diagnosis
from ladder.records import NOTHING_LEFT, Attempt, Rewrite
from ladder.rewriters.base import Rewriter, RewriteRequest, unified_diff
from ladder.rewriters.search import SEARCHES_FILE, Search, Searches, run_search
from patterns.appliers import APPLIERS, Candidate, SourceModule, generate
from patterns.appliers.dot_precision import set_precision
from patterns.appliers.tune_search import MAX_SPACE, TuneSearch
from patterns.card import Card
from patterns.matcher import default_index
from suite.operator import Tolerance

# TF32 keeps 10 of fp32's 23 mantissa bits: each operand is rounded to within 2^-11, a product to about 2^-10.
TF32_REL_ERROR = 2.0**-10
# TF32x3 adds the products of the TF32 residuals (a_hi·b_lo + a_lo·b_hi): what is left is a_lo·b_lo and the
# residuals' own rounding, about 2^-22 each; 2^-20 bounds them with room.
PRECISION_REL_ERROR = {"tf32": TF32_REL_ERROR, "tf32x3": 2.0**-20, "ieee": 0.0}


# Families whose rewrite no source transform makes safely, and why: the offline rewriter falls back to the tunable
# families and its description says so; the LLM rewriter (or the user) makes these, from the card's Rewrite section.
WITHOUT_APPLIER = {
    "async-mma": "moving a scale after the loop is exact only for a per-row or per-column factor the same in every "
    "iteration, which the source does not show",
    "operand-layout": "the operand's order in global memory is the caller's: the weight is stored K-major on the host",
    "index-arithmetic": "32-bit division is exact only while every index fits in 31 bits, which the caller knows",
    "masked-store": "storing the selected values writes every element, which is right only where the kernel owns "
    "all of them (an in-place update, a fresh output)",
}


@dataclass(frozen=True)
class Option:
    candidate: Candidate
    fallback: bool


def _cards() -> list[Card]:
    return sorted((c for c in default_index().cards.values() if c.status != "proposed"), key=lambda c: c.id)


def family_cards(family: str, cited: Sequence[str] = ()) -> list[Card]:
    """The cards of a rewrite family (its own, then those sharing an alias with them), cited ones first."""
    cards = _cards()
    own = [c for c in cards if c.family == family or family in c.aliases]
    aliases = {a for c in own for a in c.aliases}
    related = [c for c in cards if c not in own and aliases & set(c.aliases)]
    order = {cid: i for i, cid in enumerate(cited)}
    own.sort(key=lambda c: (order.get(c.id, len(order)), c.id))
    return own + related


def family_appliers(family: str, cited: Sequence[str] = ()) -> list[str]:
    """The registered appliers the family's cards name, in card order."""
    return list(dict.fromkeys(a for c in family_cards(family, cited) for a in c.appliers if a in APPLIERS))


class OfflineRewriter(Rewriter):
    def __init__(self, tune_configs: int = MAX_SPACE):
        self.tune_configs = tune_configs  # configs a tuning search compiles

    @property
    def name(self) -> str:
        return "offline"

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> OfflineRewriter:
        return cls(getattr(args, "tune_configs", MAX_SPACE))

    @staticmethod
    def _options(source: str, own: list[str]) -> tuple[list[Option], list[str]]:
        """Candidates in the order they are tried (`own` appliers', then the fallback's), and why each of the
        family's appliers that gave none did not apply (or failed) on this kernel."""
        rest = [a for a in APPLIERS if a not in own]
        options: list[Option] = []
        failed: list[str] = []
        try:
            mod = SourceModule(source)
        except SyntaxError as e:
            return [], [f"the base kernel does not parse: {e}"]
        for names, fallback in ((own, False), (rest, True)):
            for name in names:
                try:
                    why = APPLIERS[name].why_not(mod)
                    if why is not None:
                        if not fallback:  # the diagnosed family's applier: its reason goes to the round record
                            failed.append(why)
                        continue
                    options += [Option(c, fallback) for c in generate(source, names=[name])]
                except Exception as e:  # an applier that cannot read this kernel: the others still can
                    failed.append(f"{name}: {type(e).__name__}: {e}")
        return options, failed

    def rewrite(self, request: RewriteRequest) -> Rewrite:
        d = request.diagnosis
        family = d.family.name if d and d.family else None
        cited = list(d.family.cards) if d and d.family else []
        own = family_appliers(family, cited) if family else list(APPLIERS)
        options, failed = self._options(request.base_source, own)
        options, refused = _admissible(options, request.op.tolerance)
        options, unrealized = _realizing_first(options, request.base_source, d, request.op.tolerance)
        tried = {p.candidate for p in request.history if p.candidate}
        base = digest(request.base_source)
        request.workdir.mkdir(parents=True, exist_ok=True)
        searches = Searches(request.workdir.parent / SEARCHES_FILE)
        chosen: Option | None = None
        chosen_at = -1
        search: Search | str | None = None  # the tuning search's result, or why there is none
        for i, o in enumerate(options):
            if digest(o.candidate.source) in tried | {base} or searches.tried(o.candidate, tried | {base}):
                continue
            if o.candidate.applier == TuneSearch.name:
                v = request.base_validation
                if v is not None and v.correct and not v.timed:  # the interpreter: no autotuner, no timings
                    search = f"tuning search skipped: the validator ({v.validator}) does not time, so no config can win"
                    continue
                found = run_search(request, o.candidate, searches, self.tune_configs)
                search = found
                if isinstance(found, str):  # nothing left to time beyond the base's own config
                    continue
                o = Option(found.candidate, o.fallback)
            chosen, chosen_at = o, i
            break
        (request.workdir / "offline-candidates.json").write_text(
            json.dumps(
                {
                    "family": family,
                    "family_appliers": own if family else None,
                    "not_applied": failed,
                    "refused_by_tolerance": refused,
                    "unrealized_requirement": unrealized,
                    "tuning_search": search.to_json() if isinstance(search, Search) else search,
                    "candidates": [
                        {
                            **o.candidate.to_json(),
                            "fallback": o.fallback,
                            "tried": digest(o.candidate.source) in tried,
                            "chosen": i == chosen_at,
                        }
                        for i, o in enumerate(options)
                    ],
                },
                indent=1,
            )
        )
        if chosen is None:
            why = (
                f"no untried candidate: {len(options)} mechanical candidate(s) for this kernel"
                f"{f' (family {family})' if family else ''}, all tried in earlier rounds"
                f"{f' ({search})' if isinstance(search, str) else ''}"
            )
            return Rewrite(self.name, family, why, "", "", (Attempt(why, {}, NOTHING_LEFT),))
        c = chosen.candidate
        card = default_index().cards[c.card]
        description = f"{c.applier} (card {c.card}): {c.description}"
        applied = family
        if chosen.fallback or family is None:
            applied = card.family
            if family is None:
                description = f"no diagnosis: {description}"
            else:
                n_own = sum(not o.fallback for o in options)
                why = f" ({WITHOUT_APPLIER[family]})" if family in WITHOUT_APPLIER else ""
                reason = (
                    f"has no mechanical applier{why}"
                    if not own
                    else f"has mechanical appliers ({', '.join(own)}) but none applies to this kernel"
                    + (f" ({'; '.join(failed)})" if failed else "")
                    if not n_own
                    else f"has {n_own} mechanical candidate(s) ({', '.join(own)}), all tried"
                )
                description = f"fallback: the diagnosed family {family} {reason}; {description}"
        return Rewrite(
            f"{self.name}:{c.applier}",
            applied,
            description,
            c.source,
            unified_diff(request.base_source, c.source),
            (Attempt(None, {}, "applied"),),
        )


def _realizing_first(
    options: list[Option], source: str, d: Diagnosis | None, tolerance: Tolerance | None = None
) -> tuple[list[Option], str | None]:
    """The candidates that realize L4's confirmed requirement first (a new hint or precision candidate, or the
    applier candidates setting exactly the confirmed values), the others after, in their order; and why the
    requirement could not be realized, if it could not."""
    h = d.hypothesis if d is not None else None
    if h is None or not h.confirmed or h.counterfactual is None or h.finding is None:
        return options, None
    realize: Mapping[str, Any] = h.counterfactual["realize"]
    params = dict(realize["params"])
    why = f"realizes L4's confirmed requirement ({h.counterfactual['requirement']})"
    if realize["kind"] in (HINT, PRECISION):
        hazard = h.finding.hazard
        made = (
            _hints(source, hazard.kernel, params)
            if realize["kind"] == HINT
            else _precision(source, hazard.kernel, hazard.lines, params["input_precision"], tolerance)
        )
        if isinstance(made, str):
            return options, made
        return (
            [Option(replace(made, description=f"{made.description}; {why}"), False)] if made else []
        ) + options, None
    matching = [o for o in options if params.items() <= o.candidate.params.items()]
    chosen = [Option(replace(o.candidate, description=f"{o.candidate.description}; {why}"), False) for o in matching]
    return chosen + [o for o in options if o not in matching], None


def _precision_refusal(precision: str, tolerance: Tolerance | None) -> str | None:
    """Why the operator's tolerance refuses a dot precision (None when it admits it): TF32 rounds each fp32 operand
    to 10 mantissa bits, which a tolerance tighter than that rounding cannot absorb."""
    error = PRECISION_REL_ERROR.get(precision.lower(), TF32_REL_ERROR)
    if tolerance is not None and tolerance.kind == "float" and min(tolerance.rtol, tolerance.rel_l2) >= error:
        return None
    bound = (
        "no float tolerance"
        if tolerance is None or tolerance.kind != "float"
        else (f"rtol {tolerance.rtol:g}, rel_l2 {tolerance.rel_l2:g}")
    )
    return (
        f"input_precision={precision!r} not applied: the operator's tolerance ({bound}) is tighter than "
        f"{precision.upper()}'s rounding of the fp32 operands (about {error:.1e} relative per product); the dot "
        "keeps the precision the source asks for"
    )


def _admissible(options: list[Option], tolerance: Tolerance | None) -> tuple[list[Option], list[str]]:
    """The options whose dot precision (params' input_precision) the operator's tolerance admits, and why the
    others were dropped."""
    kept, dropped = [], []
    for o in options:
        precision = o.candidate.params.get("input_precision")
        why = _precision_refusal(precision, tolerance) if precision else None
        if why is None:
            kept.append(o)
        else:
            dropped.append(f"{o.candidate.applier}: {why}")
    return kept, dropped


def _precision(
    source: str, kernel: str, lines: Sequence[int], precision: str, tolerance: Tolerance | None
) -> Candidate | str | None:
    """`input_precision="<precision>"` on `kernel`'s tl.dot calls at `lines` (replacing input_precision or
    allow_tf32), or why not: the tolerance gate, then the dot_precision applier's edit."""
    why = _precision_refusal(precision, tolerance)
    if why is not None:
        return why
    try:
        mod = SourceModule(source)
    except SyntaxError:
        return None
    if kernel not in mod.kernels:
        return None
    return set_precision(mod, kernel, lines, precision)


def _hints(source: str, kernel: str, params: Mapping[str, int]) -> Candidate | None:
    """`NAME = tl.multiple_of(NAME, V)` for each argument at the top of `kernel`'s body (after its docstring)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == kernel), None)
    if fn is None or not all(p in {a.arg for a in fn.args.args} for p in params):
        return None
    body = fn.body
    first = (
        body[1]
        if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
        else body[0]
    )
    lines = source.splitlines(keepends=True)
    indent = lines[first.lineno - 1][: first.col_offset]
    added = "".join(f"{indent}{n} = tl.multiple_of({n}, {v})\n" for n, v in params.items())
    new = "".join(lines[: first.lineno - 1]) + added + "".join(lines[first.lineno - 1 :])
    names = ", ".join(params)
    return Candidate(
        "whatif_hints",
        "divisibility-hints",
        f"tl.multiple_of hints on {names} at line {first.lineno} of {kernel}",
        new,
        dict(params),
    )
