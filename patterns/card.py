"""Pattern cards: Markdown files with YAML front matter, validated against schema/card.schema.json.

    ---
    schema_version: 1
    id: index-free-top2
    family: index-reduction
    symptoms:
      - when: ttir.compute.reduce_index >= 1
        weight: 3
        why: …
    …
    ---
    ## Rewrite
    …
    ## Before
    ```python
    …
    ```
    ## After
    ```python
    …
    ```
    ## Notes   (optional)

The front matter carries every machine-read field; the body carries the recipe and the example. A loaded card's
document (front matter + `rewrite`, `example`, `notes`) is what the schema validates.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from patterns.features import FEATURES
from patterns.names import check_name
from patterns.predicate import Predicate, PredicateError

CARDS_DIR = Path(__file__).resolve().parent / "cards"
PROPOSED = "proposed"  # subdirectory of a cards directory where synthesis writes new cards
SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "card.schema.json"
SCHEMA_VERSION = 1
_SECTIONS = {"rewrite": "Rewrite", "before": "Before", "after": "After", "notes": "Notes"}


class CardError(ValueError):
    """A card that does not load: the file and every problem found, so all can be fixed in one pass."""

    def __init__(self, path: Path | str, problems: list[str]):
        self.path, self.problems = str(path), problems
        super().__init__(f"{path}: invalid pattern card:\n" + "\n".join(f"  - {p}" for p in problems))


@cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text())


@dataclass(frozen=True)
class Clause:
    when: Predicate
    why: str
    weight: float = 1.0


@dataclass
class Card:
    id: str
    family: str
    title: str
    status: str
    kind: str
    targets: list[str]
    summary: str
    symptoms: list[Clause]
    preconditions: list[Clause]
    anti_signals: list[Clause]
    rewrite: str
    before: str
    after: str
    notes: str
    expected_effect: dict[str, Any]
    sources: list[dict[str, str]]
    appliers: list[str]
    recognize: list[Predicate]
    keywords: list[str]
    aliases: list[str]  # the ladder's family names for this rewrite (fuse-passes, avoid-index-reduction, …)
    evidence_log: list[dict[str, Any]]
    path: Path | None = None
    sha256: str = ""
    document: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {**self.document, "path": str(self.path) if self.path else None, "sha256": self.sha256}


def split_card_text(text: str, path: Path | str) -> tuple[dict[str, Any], dict[str, Any]]:
    """→ (front matter, body fields). Raises CardError for a malformed file."""
    if not text.startswith("---\n"):
        raise CardError(path, ["the file must start with a YAML front matter block: a line `---`, YAML, a line `---`"])
    end = text.find("\n---\n", 4)
    if end < 0:
        raise CardError(path, ["the YAML front matter is not closed by a line `---`"])
    try:
        front = yaml.safe_load(text[4:end])
    except yaml.YAMLError as e:
        raise CardError(path, [f"the front matter is not valid YAML: {e}"]) from e
    if not isinstance(front, dict):
        raise CardError(path, ["the front matter must be a YAML mapping"])
    return front, parse_body(text[end + 5 :], path)


def parse_body(body: str, path: Path | str) -> dict[str, Any]:
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in body.splitlines():
        m = re.match(r"^##\s+(.+?)\s*$", line)
        if m:
            current = m.group(1).strip().lower()
            if current in sections:
                raise CardError(path, [f"section '## {m.group(1)}' appears twice"])
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
        elif line.strip():
            raise CardError(path, [f"text before the first '## ' section: {line.strip()[:60]!r}"])
    unknown = sorted(set(sections) - set(_SECTIONS))
    problems = [f"unknown section '## {u}'; sections: {', '.join(_SECTIONS.values())}" for u in unknown]
    out: dict[str, Any] = {}
    for key in ("before", "after"):
        if key in sections:
            code = _fenced_code("\n".join(sections[key]))
            if code is None:
                problems.append(f"section '## {_SECTIONS[key]}' needs a fenced code block (```python … ```)")
            else:
                out.setdefault("example", {})[key] = code
    for key in ("rewrite", "notes"):
        if key in sections:
            out[key] = "\n".join(sections[key]).strip()
    if problems:
        raise CardError(path, problems)
    return out


def _fenced_code(text: str) -> str | None:
    m = re.search(r"^```[a-zA-Z]*\n(.*?)^```\s*$", text, re.S | re.M)
    return m.group(1).rstrip("\n") + "\n" if m else None


def render_card(doc: dict[str, Any]) -> str:
    """The file text of a card document (inverse of split_card_text)."""
    front = {k: v for k, v in doc.items() if k not in ("rewrite", "example", "notes")}
    text = "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=110) + "---\n"
    text += f"## Rewrite\n\n{doc['rewrite'].strip()}\n\n"
    text += f"## Before\n\n```python\n{doc['example']['before'].rstrip()}\n```\n\n"
    text += f"## After\n\n```python\n{doc['example']['after'].rstrip()}\n```\n"
    if doc.get("notes"):
        text += f"\n## Notes\n\n{doc['notes'].strip()}\n"
    return text


def validate_document(doc: dict[str, Any]) -> list[str]:
    """Every problem with a card document: schema errors, then predicates that do not parse or name unknown facts."""
    problems = [
        f"{'/'.join(map(str, e.absolute_path)) or '(card)'}: {e.message}"
        for e in sorted(jsonschema.Draft202012Validator(schema()).iter_errors(doc), key=str)
    ]
    if problems:
        return problems
    for part in ("symptoms", "preconditions", "anti_signals"):
        for i, clause in enumerate(doc[part]):
            problems += [f"{part}[{i}]: {p}" for p in check_predicate(clause["when"])]
    for i, text in enumerate(doc.get("recognize", [])):
        problems += [f"recognize[{i}]: {p}" for p in check_predicate(text, recognizer=True)]
    return problems


def check_predicate(text: str, recognizer: bool = False) -> list[str]:
    """Parse errors and unknown names in one predicate. Recognizers read before.src.* and after.src.* only."""
    try:
        pred = Predicate.parse(text)
    except PredicateError as e:
        return [str(e)]
    problems = []
    for name in pred.names():
        if recognizer:
            side, _, rest = name.partition(".")
            if side not in ("before", "after") or not rest.startswith("src."):
                problems.append(f"recognizers read before.src.<feature> and after.src.<feature>, not {name!r}")
                continue
            name = rest
        why = check_name(name, frozenset(FEATURES))
        if why:
            problems.append(why)
    return problems


def card_from_document(doc: dict[str, Any], path: Path | None = None, sha256: str = "") -> Card:
    problems = validate_document(doc)
    if problems:
        raise CardError(path or doc.get("id", "<card>"), problems)

    def clauses(key: str) -> list[Clause]:
        return [Clause(Predicate.parse(c["when"]), c["why"], float(c.get("weight", 1))) for c in doc[key]]

    return Card(
        id=doc["id"],
        family=doc["family"],
        title=doc["title"],
        status=doc["status"],
        kind=doc.get("kind", "optimization"),
        targets=list(doc["targets"]),
        summary=doc["summary"],
        symptoms=clauses("symptoms"),
        preconditions=clauses("preconditions"),
        anti_signals=clauses("anti_signals"),
        rewrite=doc["rewrite"],
        before=doc["example"]["before"],
        after=doc["example"]["after"],
        notes=doc.get("notes", ""),
        expected_effect=dict(doc["expected_effect"]),
        sources=list(doc["sources"]),
        appliers=list(doc.get("appliers", [])),
        recognize=[Predicate.parse(t) for t in doc.get("recognize", [])],
        keywords=list(doc.get("keywords", [])),
        aliases=list(doc.get("aliases", [])),
        evidence_log=list(doc["evidence_log"]),
        path=path,
        sha256=sha256,
        document=doc,
    )


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def load_card(path: Path | str) -> Card:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise CardError(p, [f"cannot read the file: {e}"]) from e
    front, body = split_card_text(text, p)
    doc = {**front, **body}
    card = card_from_document(doc, p, content_hash(text))
    if p.stem != card.id:
        raise CardError(p, [f"the file name must be the card id: rename to {card.id}.md"])
    return card


def card_files(cards_dir: Path | str = CARDS_DIR, include_proposed: bool = True) -> list[Path]:
    d = Path(cards_dir)
    files = sorted(d.glob("*.md"))
    if include_proposed:
        files += sorted((d / PROPOSED).glob("*.md"))
    return [f for f in files if f.name.upper() != "INDEX.MD"]


def load_cards(cards_dir: Path | str = CARDS_DIR, include_proposed: bool = True) -> list[Card]:
    """Every card in `cards_dir` (and its proposed/ subdirectory). Raises CardError naming every bad file."""
    cards: list[Card] = []
    errors: list[str] = []
    for f in card_files(cards_dir, include_proposed):
        try:
            cards.append(load_card(f))
        except CardError as e:
            errors.append(str(e))
    seen: dict[str, Card] = {}
    for c in cards:
        if c.id in seen:
            errors.append(f"{c.path}: card id {c.id!r} is also used by {seen[c.id].path}")
        seen[c.id] = c
    if errors:
        raise CardError(cards_dir, errors)
    return cards
