"""Retrospective synthesis: map each finished round to a pattern family, or propose a new card.

Rule-based, in order of strength: the card or applier the round names; the family it names; the cards whose
`recognize` predicates hold on the source features before and after the round; keyword hits in its description
and diff. With an LLM endpoint configured, rounds the rules map only weakly (keywords) or not at all are put to
the model, whose answer is validated like any card. A round nothing explains becomes a proposed card.

Outputs (write_outputs): index.json (families, cards, each card's rounds from this history, content hashes of
every generated file), INDEX.md, and proposed/<id>.md. Curated cards are never written; a generated file whose
content no longer matches the hash recorded when it was written has been edited by a person and is kept.
"""

from __future__ import annotations

import ast
import json
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from patterns.card import PROPOSED, SCHEMA_VERSION, Card, card_from_document, check_predicate, content_hash, render_card
from patterns.features import FEATURES, extract
from patterns.history import HistoryRound
from patterns.llm import LLMConfig, LLMError, ask_json

INDEX_FORMAT = "irscope-pattern-index"
INDEX_VERSION = 1
STRENGTH = {
    "declared-card": 1.0,
    "applier": 1.0,
    "recognizer": 0.9,
    "declared-family": 0.8,
    "llm": 0.7,
    "keywords": 0.5,
    "proposed": 0.3,
}
_STOP = {
    "the",
    "a",
    "an",
    "and",
    "or",
    "of",
    "to",
    "in",
    "on",
    "for",
    "with",
    "by",
    "from",
    "into",
    "per",
    "use",
    "uses",
    "using",
    "instead",
    "replace",
    "replaced",
    "kernel",
    "triton",
    "then",
    "than",
    "as",
    "at",
    "is",
    "it",
    "its",
    "one",
    "each",
    "all",
    "not",
    "no",
    "new",
    "add",
    "added",
    "more",
    "less",
    "so",
    "while",
    "true",
    "false",
    "which",
    "that",
    "this",
    "tl",
    "loop",
    "loops",
    "range",
    "load",
    "loads",
    "store",
    "stores",
    "program",
    "programs",
    "row",
    "rows",
    "block",
    "blocks",
    "pass",
    "passes",
    "value",
    "values",
}


@dataclass
class FamilyAssignment:
    family: str
    card: str | None
    method: str  # declared-card | applier | declared-family | recognizer | keywords | llm | proposed
    confidence: float
    evidence: list[str] = field(default_factory=list)  # why: the predicate and values, the keywords, …

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass
class Assignment:
    round: HistoryRound
    families: list[FamilyAssignment]
    interpretation: str
    proposal: str | None = None  # id of the card proposed for this round
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.round.to_json(),
            "families": [f.to_json() for f in self.families],
            "interpretation": self.interpretation,
            "proposal": self.proposal,
            "notes": self.notes,
        }


@dataclass
class SynthesisResult:
    assignments: list[Assignment]
    proposals: dict[str, dict[str, Any]]  # id → card document
    cards: list[Card]  # curated and proposed cards the rounds were mapped against, proposals included

    def to_json(self) -> dict[str, Any]:
        return {"assignments": [a.to_json() for a in self.assignments], "proposals": sorted(self.proposals)}


# --- evidence of one round -----------------------------------------------------------------------------------


def _features(source: str | None, where: str, notes: list[str]) -> dict[str, Any] | None:
    if not source:
        return None
    try:
        return extract(source, filename=where).values
    except ValueError as e:
        notes.append(f"source not analyzable: {e}")
        return None


def changed_features(before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, tuple[Any, Any]]:
    if before is None or after is None:
        return {}
    return {k: (before.get(k), after.get(k)) for k in FEATURES if before.get(k) != after.get(k)}


def _added_lines(diff: str | None) -> str:
    if not diff:
        return ""
    return "\n".join(ln[1:] for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++"))


def _recognized(cards: list[Card], before: dict | None, after: dict | None) -> list[tuple[Card, str]]:
    if before is None or after is None:
        return []

    def lookup(name: str) -> Any:
        side, _, rest = name.partition(".")
        feats = before if side == "before" else after if side == "after" else {}
        return feats.get(rest.removeprefix("src.")) if rest.startswith("src.") else None

    out = []
    for c in cards:
        for pred in c.recognize:
            got = pred.evaluate(lookup)
            if got.value:
                vals = ", ".join(f"{k}={v}" for k, v in got.read.items())
                out.append((c, f"recognized: {pred.text} [{vals}]"))
                break
    return out


MIN_KEYWORD_HITS = 2  # one shared word ("warps", "fuse") says little; two specific ones say what the round did


def _keyword_hits(cards: list[Card], r: HistoryRound, least: int = MIN_KEYWORD_HITS) -> list[tuple[Card, list[str]]]:
    """Cards with the most keyword hits (at least `least`) in the description and the diff's added lines."""
    text = f"{r.description}\n{_added_lines(r.diff)}".lower()
    scored = []
    for c in cards:
        hits = [kw for kw in c.keywords if re.search(r"(?<![\w])" + re.escape(kw.lower()) + r"(?![\w])", text)]
        if len(hits) >= least:
            scored.append((c, hits))
    if not scored:
        return []
    best = max(len(h) for _, h in scored)
    return [(c, h) for c, h in scored if len(h) == best][:2]


# --- proposals -----------------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Distinct content words of a description, in order (no stopwords, no generic kernel vocabulary)."""
    words = [w for w in re.findall(r"[a-z][a-z0-9_]+", text.lower()) if w not in _STOP and len(w) >= 3]
    return list(dict.fromkeys(words))


def _slug(text: str, limit: int = 3) -> str:
    parts = [p for w in _words(text) for p in w.split("_") if p and p not in _STOP]
    return "-".join(list(dict.fromkeys(parts))[:limit])


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: text.rfind(" ", 0, limit - 1)].rstrip(",;:") + "…"


def _changed_function(before: str | None, after: str | None) -> tuple[str, str] | None:
    """The first @triton.jit function whose text differs between two modules (40 lines at most each)."""
    if not before or not after:
        return None
    try:
        tb, ta = ast.parse(before), ast.parse(after)
    except SyntaxError:
        return None
    fb = {n.name: ast.get_source_segment(before, n) for n in tb.body if isinstance(n, ast.FunctionDef)}
    fa = {n.name: ast.get_source_segment(after, n) for n in ta.body if isinstance(n, ast.FunctionDef)}
    for name in fb:
        if name in fa and fb[name] != fa[name]:
            return _clip(fb[name] or ""), _clip(fa[name] or "")
    if fb and fa:
        return _clip(next(iter(fb.values())) or ""), _clip(next(iter(fa.values())) or "")
    return None


def _clip(text: str, lines: int = 40) -> str:
    rows = text.splitlines()
    return "\n".join(rows[:lines] + (["# …"] if len(rows) > lines else [])) + "\n"


def _from_diff(diff: str) -> tuple[str, str]:
    before, after = [], []
    for ln in diff.splitlines():
        if ln.startswith(("+++", "---", "@@")):
            continue
        if ln.startswith("-"):
            before.append(ln[1:])
        elif ln.startswith("+"):
            after.append(ln[1:])
        else:
            before.append(ln[1:] if ln.startswith(" ") else ln)
            after.append(ln[1:] if ln.startswith(" ") else ln)
    return _clip("\n".join(before)), _clip("\n".join(after))


def _symptom_clauses(changed: dict[str, tuple[Any, Any]], r: HistoryRound) -> list[dict[str, Any]]:
    """Symptoms from what the round changed (the state before it), else from the evidence it recorded."""
    clauses: list[dict[str, Any]] = []
    for name, (b, a) in changed.items():
        if isinstance(b, bool) and isinstance(a, bool):
            when = f"src.{name}" if b else f"not src.{name}"
            why = f"observed before round {r.round} of {r.op}; the rewrite {'removed' if b else 'added'} it"
        elif isinstance(b, int) and isinstance(a, int):
            when = f"src.{name} >= {b}" if b > a else f"src.{name} <= {b}"
            why = f"src.{name} was {b} before round {r.round} of {r.op} and {a} after"
        else:
            continue
        clauses.append({"when": when, "why": why})
    ev = r.evidence
    facts = (
        [(f"l2.{k}", v) for k, v in ev.l2.items()]
        + [(f"src.{k}", v) for k, v in ev.source_features.items()]
        + sorted(ev.counters.items())
    )
    for name, v in facts:
        if len(clauses) >= 3:
            break
        if isinstance(v, bool):
            when = name if v else f"not {name}"
        elif isinstance(v, str):
            when = f'{name} == "{v}"'
        elif isinstance(v, int | float) and v:
            when = f"{name} >= {v:g}" if not name.startswith("l2.") else f"{name} <= {v:g}"
        else:
            continue
        clauses.append({"when": when, "why": f"recorded before round {r.round} of {r.op}"})
    valid = [c for c in clauses if not check_predicate(c["when"])][:3]
    if not valid:
        valid = [
            {
                "when": "src.num_kernels >= 1",
                "weight": 0.1,
                "why": "placeholder: the round recorded no evidence; replace with the symptom that motivated it",
            }
        ]
    return valid


def _recognizer(changed: dict[str, tuple[Any, Any]]) -> list[str]:
    parts = []
    for name, (b, a) in list(changed.items())[:2]:
        if isinstance(b, bool) and isinstance(a, bool):
            parts.append(
                f"before.src.{name} and not after.src.{name}" if b else f"after.src.{name} and not before.src.{name}"
            )
        elif isinstance(b, int) and isinstance(a, int):
            parts.append(f"before.src.{name} {'>' if b > a else '<'} after.src.{name}")
    return [" and ".join(f"({p})" for p in parts)] if parts else []


def propose(
    r: HistoryRound,
    changed: dict[str, tuple[Any, Any]],
    taken: set[str],
    method: str = "proposed",
    llm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A schema-valid proposed card for a round no card explains (`llm`: fields the model suggested)."""
    llm = llm or {}
    base = _slug(llm.get("title") or r.description) or f"{r.op}-round-{r.round}"
    cid, n = base[:60], 2
    while cid in taken:
        cid, n = f"{base[:56]}-{n}", n + 1
    suggested = llm.get("family")
    family = (
        suggested
        if isinstance(suggested, str) and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", suggested)
        else (_slug(r.description, 2) or cid)
    )
    example = _changed_function(r.parent_source, r.candidate_source) or (_from_diff(r.diff) if r.diff else None)
    before, after = example or ("# not recorded in the round history\n", "# not recorded in the round history\n")
    rewrite = llm.get("rewrite") or r.description
    if r.diff and not llm.get("rewrite"):
        rewrite += "\n\nRecorded diff:\n\n```diff\n" + "\n".join(r.diff.splitlines()[:60]) + "\n```"
    entry = {
        "op": r.op,
        "round": r.round,
        "outcome": r.decision,
        "speedup": r.speedup,
        "change": r.description[:300],
        "source": r.where,
    }
    speed = f"{r.speedup:g}x vs the parent" if r.speedup else "no validated speedup"
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "id": cid,
        "family": family[:48],
        "title": _shorten(llm.get("title") or r.description or cid, 120).ljust(5, "."),
        "status": "proposed",
        "kind": "optimization",
        "targets": ["cuda", "hip"],
        "summary": _shorten(
            llm.get("summary") or f"Proposed from {r.op} round {r.round} ({r.decision}, {speed}): {r.description}", 2000
        ).ljust(20, "."),
        "symptoms": llm.get("symptoms") or _symptom_clauses(changed, r),
        "preconditions": llm.get("preconditions") or [],
        "anti_signals": [],
        "expected_effect": {
            "summary": f"Measured {speed} on {r.op} (round {r.round}, {r.decision}).",
            "metric": "time",
            **({"typical_speedup": [r.speedup, r.speedup]} if r.speedup else {}),
        },
        "sources": [{"title": f"round history {r.where}", "where": r.where}],
        "appliers": [],
        "recognize": _recognizer(changed),
        "keywords": _words(r.description)[:6],
        "evidence_log": [entry],
        "rewrite": rewrite.ljust(20, "."),
        "example": {"before": before, "after": after},
        "notes": f"Proposed by `patterns synthesize` ({method}) from {r.where}. Review the symptoms and the "
        f"rewrite, then move the file out of proposed/ and set status: curated.",
    }
    return doc


# --- LLM -----------------------------------------------------------------------------------------------------

_SYSTEM = """You classify one finished optimization round of a Triton GPU kernel against a catalog of pattern
cards. Answer with one JSON object and nothing else:
{"card": "<catalog id or null>", "family": "<family of that card, or a new kebab-case family>",
 "confidence": <0..1>, "interpretation": "<one or two sentences: what the round did and why it helped or not>",
 "new_card": null or {"title": "...", "family": "...", "summary": "...", "rewrite": "...",
                      "symptoms": [{"when": "<predicate>", "why": "..."}]}}
Use "card" when a catalog card describes the rewrite; otherwise "card": null and a "new_card". Predicates use
names such as src.uses_argmax, src.input_passes >= 3, ttgir.layout.convert_layout >= 2, l2.sol_fraction < 0.3."""


def _llm_user(r: HistoryRound, cards: list[Card], changed: dict[str, tuple[Any, Any]]) -> str:
    catalog = "\n".join(f"{c.id} | {c.family} | {c.title}" for c in cards)
    facts = {**{f"l2.{k}": v for k, v in r.evidence.l2.items()}, **dict(sorted(r.evidence.counters.items())[:40])}
    body = {
        "op": r.op,
        "round": r.round,
        "description": r.description,
        "decision": r.decision,
        "speedup": r.speedup,
        "features_changed": {k: list(v) for k, v in changed.items()},
        "evidence": facts,
        "diff": (r.diff or "")[:6000],
    }
    return f"Catalog (id | family | title):\n{catalog}\n\nRound:\n{json.dumps(body, indent=1, default=str)}"


def _ask_llm(
    llm: LLMConfig, r: HistoryRound, cards: list[Card], changed: dict, taken: set[str], notes: list[str]
) -> tuple[FamilyAssignment | None, dict | None, str | None]:
    """(assignment to an existing card, proposed card document, interpretation) from the model's answer."""
    try:
        ans = ask_json(llm, _SYSTEM, _llm_user(r, cards, changed))
    except LLMError as e:
        notes.append(f"llm: {e}")
        return None, None, None
    interp = ans.get("interpretation") if isinstance(ans.get("interpretation"), str) else None
    conf = ans.get("confidence")
    conf = float(conf) if isinstance(conf, int | float) and 0 <= conf <= 1 else 0.5
    by_id = {c.id: c for c in cards}
    cid = ans.get("card")
    if isinstance(cid, str) and cid in by_id:
        c = by_id[cid]
        return (
            FamilyAssignment(
                c.family,
                c.id,
                "llm",
                round(STRENGTH["llm"] * conf, 3),
                [f"llm ({llm.model}): {interp or 'no interpretation'}"],
            ),
            None,
            interp,
        )
    if cid:
        notes.append(f"llm named card {cid!r}, which is not in the catalog; answer ignored")
    new = ans.get("new_card")
    if isinstance(new, dict):
        suggestion = {k: new[k] for k in ("title", "family", "summary", "rewrite") if isinstance(new.get(k), str)}
        syms = new.get("symptoms")
        if (
            isinstance(syms, list)
            and syms
            and all(
                isinstance(s, dict) and isinstance(s.get("when"), str) and isinstance(s.get("why"), str) for s in syms
            )
        ):
            bad = [p for s in syms for p in check_predicate(s["when"])]
            if bad:
                notes.append(f"llm symptoms rejected ({'; '.join(bad[:3])}); rule-based symptoms used")
            else:
                suggestion["symptoms"] = [{"when": s["when"], "why": s["why"]} for s in syms]
        doc = propose(r, changed, taken, "llm", suggestion)
        try:
            card_from_document(doc)
        except ValueError as e:
            notes.append(f"llm card proposal invalid ({str(e).splitlines()[-1].strip()}); rule-based proposal used")
            return None, None, interp
        return None, doc, interp
    notes.append("llm answer had neither a catalog card nor a new_card")
    return None, None, interp


# --- synthesis -----------------------------------------------------------------------------------------------


def _interpret(r: HistoryRound, fams: list[FamilyAssignment], changed: dict[str, tuple[Any, Any]]) -> str:
    speed = f"{r.speedup:g}x vs the parent" if r.speedup else "no validated speedup"
    what = ", ".join(f"{k} {b}→{a}" for k, (b, a) in list(changed.items())[:6]) or "no source features recorded"
    to = "; ".join(f"{f.family}/{f.card or '-'} by {f.method}" for f in fams)
    return f"{r.op} round {r.round} ({r.decision}, {speed}); source changes: {what}; mapped to {to}."


def _declared_family(
    r: HistoryRound,
    cards: list[Card],
    fams: list[FamilyAssignment],
    add: Callable[[FamilyAssignment], None],
    notes: list[str],
) -> None:
    """The family the round names: a card family, or an alias (the ladder's family names) of some cards."""
    members = [c for c in cards if c.family == r.family] or [c for c in cards if r.family in c.aliases]
    if not members:
        notes.append(f"the round names family {r.family!r}, which no card has or aliases")
        return
    if any(f.card in {c.id for c in members} for f in fams):
        return  # a recognizer already picked one of them
    best = _keyword_hits(members, r, least=1)[:1]  # the member card whose keywords the round mentions
    why = [f"the round names family {r.family}"] + [f"keywords: {', '.join(h)}" for _, h in best]
    if best:
        add(FamilyAssignment(best[0][0].family, best[0][0].id, "declared-family", STRENGTH["declared-family"], why))
    elif len({c.family for c in members}) == 1:
        add(FamilyAssignment(members[0].family, None, "declared-family", STRENGTH["declared-family"], why))
    else:
        notes.append(
            f"family {r.family!r} spans {', '.join(sorted({c.family for c in members}))}; "
            f"nothing in the round picks one"
        )


def map_round(
    r: HistoryRound, cards: list[Card], llm: LLMConfig | None, taken: set[str]
) -> tuple[Assignment, dict[str, Any] | None]:
    from patterns.appliers import APPLIERS

    notes: list[str] = []
    by_id = {c.id: c for c in cards}
    before = _features(r.parent_source, f"{r.where} (parent)", notes)
    after = _features(r.candidate_source, f"{r.where} (candidate)", notes)
    changed = changed_features(before, after)
    fams: list[FamilyAssignment] = []

    def add(fa: FamilyAssignment) -> None:
        same = next((f for f in fams if (f.card, f.family) == (fa.card, fa.family)), None)
        if same is None:
            fams.append(fa)
        elif fa.confidence > same.confidence:
            fams[fams.index(same)] = fa

    if r.card:
        if r.card in by_id:
            add(FamilyAssignment(by_id[r.card].family, r.card, "declared-card", 1.0, [f"the round names {r.card}"]))
        else:
            notes.append(f"the round names card {r.card!r}, which is not in the catalog")
    if r.applier:
        if r.applier in APPLIERS and APPLIERS[r.applier].card in by_id:
            c = by_id[APPLIERS[r.applier].card]
            add(FamilyAssignment(c.family, c.id, "applier", 1.0, [f"produced by applier {r.applier}"]))
        else:
            notes.append(f"unknown applier {r.applier!r}")
    recognized = _recognized(cards, before, after)
    for c, why in recognized:
        add(FamilyAssignment(c.family, c.id, "recognizer", STRENGTH["recognizer"], [why]))
    if r.family:
        _declared_family(r, cards, fams, add, notes)
    if not fams:
        for c, hits in _keyword_hits(cards, r):
            add(FamilyAssignment(c.family, c.id, "keywords", STRENGTH["keywords"], [f"keywords: {', '.join(hits)}"]))
    proposal: dict[str, Any] | None = None
    interp = None
    if llm is not None and all(f.method == "keywords" for f in fams):
        fa, doc, interp = _ask_llm(llm, r, cards, changed, taken, notes)
        if fa is not None:
            add(fa)
        elif doc is not None and not fams:
            proposal = doc
            add(FamilyAssignment(doc["family"], doc["id"], "llm", STRENGTH["llm"], [f"llm proposed {doc['id']}"]))
    if not fams:
        proposal = propose(r, changed, taken)
        add(
            FamilyAssignment(
                proposal["family"],
                proposal["id"],
                "proposed",
                STRENGTH["proposed"],
                [f"no card explains it; proposed {proposal['id']}"],
            )
        )
    fams.sort(key=lambda f: -f.confidence)
    text = _interpret(r, fams, changed) + (f" LLM: {interp}" if interp else "")
    return Assignment(r, fams, text, proposal["id"] if proposal else None, notes), proposal


def synthesize(rounds: list[HistoryRound], cards: list[Card], llm: LLMConfig | None = None) -> SynthesisResult:
    """Map every round that tried a rewrite (in order; a baseline, an untimed or inconclusive round, one at target
    teach nothing); proposals join the catalog so later rounds can map to them."""
    working = list(cards)
    taken = {c.id for c in working}
    assignments, proposals = [], {}
    for r in (r for r in rounds if r.learnable):
        a, doc = map_round(r, working, llm, taken)
        if doc is not None:
            card = card_from_document(doc)  # our own generator must produce valid cards
            working.append(card)
            taken.add(card.id)
            proposals[card.id] = doc
        assignments.append(a)
    return SynthesisResult(assignments, proposals, working)


# --- outputs -------------------------------------------------------------------------------------------------


@dataclass
class Written:
    files: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # human-edited files left as they are


def _history_entries(result: SynthesisResult) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for a in result.assignments:
        r = a.round
        for f in a.families:
            if f.card:
                out.setdefault(f.card, []).append(
                    {
                        "op": r.op,
                        "round": r.round,
                        "outcome": r.decision,
                        "speedup": r.speedup,
                        "change": r.description[:300],
                        "source": r.where,
                        "method": f.method,
                    }
                )
    return out


def _index_md(result: SynthesisResult, history: dict[str, list[dict[str, Any]]]) -> str:
    rows = [
        "# Pattern index",
        "",
        "Generated by `patterns synthesize`; edits here are kept (the next run leaves this "
        "file alone once its content differs from what was generated).",
        "",
    ]
    by_family: dict[str, list[Card]] = {}
    for c in result.cards:
        by_family.setdefault(c.family, []).append(c)
    for fam in sorted(by_family):
        rows += [
            f"## {fam}",
            "",
            "| card | status | rounds | accepted | median speedup (accepted) |",
            "|---|---|---|---|---|",
        ]
        for c in sorted(by_family[fam], key=lambda c: c.id):
            h = history.get(c.id, [])
            acc = [e["speedup"] for e in h if e["outcome"] == "accepted" and e["speedup"]]
            med = f"{statistics.median(acc):.2f}x" if acc else "–"
            rows.append(f"| {c.id}: {c.title} | {c.status} | {len(h)} | {len(acc)} | {med} |")
        rows.append("")
    return "\n".join(rows)


def _safe_write(
    path: Path, text: str, rel: str, recorded: dict[str, str], generated: dict[str, str], written: Written
) -> None:
    """Write unless a person edited the file since it was generated (hash differs from the recorded one)."""
    new = content_hash(text)
    if path.exists():
        current = content_hash(path.read_text())
        if current == new:
            generated[rel] = new
            return
        if recorded.get(rel) != current:
            written.skipped.append(f"{path} (edited since it was generated, or not generated by synthesis)")
            if rel in recorded:
                generated[rel] = recorded[rel]
            return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    generated[rel] = new
    written.files.append(path)


def write_outputs(result: SynthesisResult, out_dir: Path, cards_dir: Path) -> Written:
    out_dir.mkdir(parents=True, exist_ok=True)
    index_path = out_dir / "index.json"
    recorded: dict[str, str] = {}
    if index_path.exists():
        try:
            recorded = dict(json.loads(index_path.read_text()).get("generated_files", {}))
        except (json.JSONDecodeError, AttributeError):
            recorded = {}
    written = Written()
    generated: dict[str, str] = {}
    for cid, doc in result.proposals.items():
        rel = f"{PROPOSED}/{cid}.md"
        _safe_write(out_dir / rel, render_card(doc), rel, recorded, generated, written)
    history = _history_entries(result)
    _safe_write(out_dir / "INDEX.md", _index_md(result, history), "INDEX.md", recorded, generated, written)
    for rel, h in recorded.items():  # earlier generated files this run did not touch stay protected
        generated.setdefault(rel, h)
    families: dict[str, list[str]] = {}
    for c in result.cards:
        families.setdefault(c.family, []).append(c.id)

    def where(c: Card) -> str | None:
        if c.path is None:
            return f"{PROPOSED}/{c.id}.md"
        try:
            return str(c.path.relative_to(cards_dir))
        except ValueError:
            return str(c.path)

    index = {
        "format": INDEX_FORMAT,
        "format_version": INDEX_VERSION,
        "generated": datetime.now(UTC).isoformat(timespec="seconds"),
        "families": {f: sorted(ids) for f, ids in sorted(families.items())},
        "cards": {
            c.id: {
                "family": c.family,
                "title": c.title,
                "status": c.status,
                "path": where(c),
                "sha256": c.sha256 or None,
                "appliers": c.appliers,
                "history": history.get(c.id, []),
            }
            for c in sorted(result.cards, key=lambda c: c.id)
        },
        "rounds": [a.to_json() for a in result.assignments],
        "generated_files": dict(sorted(generated.items())),
    }
    index_path.write_text(json.dumps(index, indent=1, default=str) + "\n")
    written.files.append(index_path)
    return written
