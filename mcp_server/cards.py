"""Tools over the pattern cards (`patterns list | match | show`): which known rewrites a kernel's facts call
for, and a card's text. A kernel's source is read, not imported; a trajectory adds its counters and passes."""

from typing import Annotated, Any

from mcp.server import MCPServer
from pydantic import BaseModel, Field

from irscope.targets import parse_target
from mcp_server.app import App
from mcp_server.bounds import Offset, PageInfo, clip, page, per_page, trim
from mcp_server.errors import guarded
from mcp_server.trajectories import READ
from patterns.facts import KernelFacts
from patterns.matcher import Match, default_index, match


class CardRow(BaseModel):
    id: str
    family: str
    title: str
    kind: str
    status: str
    appliers: list[str]


class CardList(PageInfo):
    items: list[CardRow]


class CardMatches(PageInfo):
    evidence: dict[str, Any] = Field(description="where the facts came from")
    items: list[dict[str, Any]] = Field(description="matching cards, best first")


class CardText(PageInfo):
    id: str
    path: str | None = Field(description="the card's file among the bundled cards")
    text: str = Field(description="lines offset … offset+limit of the card")


def row(m: Match) -> dict[str, Any]:
    c = m.card
    return {
        "card": c.id,
        "family": c.family,
        "title": c.title,
        "score": round(m.score, 3),
        "confidence": round(m.confidence, 3),
        "blocked": m.blocked,
        "matched": [
            {
                "predicate": r.predicate,
                "values": trim(r.values),
                "where": trim({k: [str(x) for x in v] for k, v in r.locations.items()}, items=3),
            }
            for r in m.matched
        ],
        "against": [
            f"{r.role} {r.predicate}: {clip(r.why, 200)}"
            for r in m.anti_signals + m.preconditions
            if (r.role == "anti_signal" and r.outcome) or (r.role == "precondition" and r.outcome is False)
        ],
        "unknown": trim([r.predicate for r in m.unknown]),
        "appliers": c.appliers,
    }


def facts(app: App, source: str | None, kernel: str | None, trajectory: str | None, target: str | None) -> KernelFacts:
    if not (source or trajectory):
        raise ValueError("give the kernel as source (a workspace .py file) or trajectory (a captured one)")
    ev = KernelFacts()
    if trajectory:
        loaded = app.store.get(trajectory)
        with loaded.lock:
            ev = ev.merge(KernelFacts.from_trajectory(loaded.traj))
    if source:
        ev = ev.merge(
            KernelFacts.from_source_file(app.ws.path(source, kind="file"), kernel or ev.provenance.get("kernel"))
        )
    if target:
        ev.target = parse_target(target).to_json()
    return ev


def register(mcp: MCPServer, app: App) -> None:
    @mcp.tool(annotations=READ)
    @guarded
    def list_cards(
        family: Annotated[str | None, Field(description="only this family")] = None,
        offset: Offset = 0,
        limit: int = per_page(30, 100),
    ) -> CardList:
        """The pattern cards: known rewrites, each with the facts that call for it."""
        idx = default_index()
        if family is not None and family not in idx.by_family:
            raise ValueError(f"no card family {family!r}; families: {', '.join(idx.families())}")
        cards = [idx.cards[i] for fam in idx.families() for i in idx.by_family[fam] if family in (None, fam)]
        chunk, info = page(cards, offset, limit)
        rows = [
            CardRow(id=c.id, family=c.family, title=c.title, kind=c.kind, status=c.status, appliers=c.appliers)
            for c in chunk
        ]
        return CardList(items=rows, **info.model_dump())

    @mcp.tool(annotations=READ)
    @guarded
    def match_cards(
        source: Annotated[
            str | None, Field(description="the kernel's .py file in the workspace (read, not run)")
        ] = None,
        kernel: Annotated[str | None, Field(description="the kernel's name when the file holds several")] = None,
        trajectory: Annotated[str | None, Field(description="a captured trajectory: adds counters and passes")] = None,
        target: Annotated[str | None, Field(description="cuda:90, hip:gfx942, … (default: the trajectory's)")] = None,
        family: Annotated[str | None, Field(description="only cards of this family")] = None,
        include_blocked: Annotated[bool, Field(description="also cards whose preconditions fail, with why")] = False,
        offset: Offset = 0,
        limit: int = per_page(5, 30),
    ) -> CardMatches:
        """The pattern cards a kernel's facts match, best first: the predicates that held with their values and
        the kernel lines they point at, what argues against each card, and its mechanical appliers."""
        ev = facts(app, source, kernel, trajectory, target)
        results = match(ev, default_index(), family=family, include_blocked=include_blocked)
        chunk, info = page(results, offset, limit)
        return CardMatches(
            evidence=trim({k: str(v) for k, v in ev.provenance.items()}),
            items=[row(m) for m in chunk],
            **info.model_dump(),
        )

    @mcp.tool(annotations=READ)
    @guarded
    def show_card(
        card: Annotated[str, Field(description="a card id (list_cards, match_cards)")],
        offset: Offset = 0,
        limit: int = per_page(120),
    ) -> CardText:
        """A pattern card's text (symptoms, preconditions, the rewrite, before/after, evidence), a page at a time."""
        c = default_index().cards.get(card)
        if c is None:
            raise ValueError(f"no card {card!r}; list_cards names them")
        lines = c.path.read_text().splitlines() if c.path else []
        chunk, info = page(lines, offset, limit)
        return CardText(id=c.id, path=c.path.name if c.path else None, text="\n".join(chunk), **info.model_dump())
