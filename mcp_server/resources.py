"""Resources: trajectories, their snapshots and the pattern cards as addressable JSON documents, each the same
bounded answer its tool gives (a snapshot's IR a page at a time: `?offset=N`)."""

import json

from mcp.server import MCPServer
from pydantic import BaseModel

from mcp_server.app import App
from mcp_server.cards import CardRow
from mcp_server.errors import guarded_resource
from mcp_server.trajectories import snapshot_page, summary
from patterns.matcher import default_index

JSON = "application/json"
SNAPSHOT_LINES = 120


def _doc(model: BaseModel | dict) -> str:
    return json.dumps(model.model_dump(mode="json") if isinstance(model, BaseModel) else model, indent=1)


def register(mcp: MCPServer, app: App) -> None:
    @mcp.resource("irscope://trajectories", name="trajectories", mime_type=JSON)
    @guarded_resource
    def trajectories() -> str:
        """The trajectories captured into the workspace (names for the other URIs)."""
        return _doc({"trajectories": [d.name for d in app.store.names()]})

    @mcp.resource("irscope://trajectories/{name}", name="trajectory", mime_type=JSON)
    @guarded_resource
    def trajectory(name: str) -> str:
        """A trajectory's summary: stages, passes that changed the IR, key counters, resources."""
        return _doc(summary(app.store.get(name), 0, 20))

    @mcp.resource("irscope://trajectories/{name}/snapshots/{index}{?offset}", name="snapshot", mime_type=JSON)
    @guarded_resource
    def snapshot(name: str, index: str, offset: int = 0) -> str:
        """A snapshot's IR, a page of lines (`?offset=` for the next page)."""
        return _doc(snapshot_page(app.store.get(name), index, "ir", max(0, offset), SNAPSHOT_LINES))

    @mcp.resource("irscope://cards", name="cards", mime_type=JSON)
    @guarded_resource
    def cards() -> str:
        """Every pattern card: id, family, title."""
        rows = sorted(default_index().cards.values(), key=lambda c: (c.family, c.id))
        return _doc(
            {
                "cards": [
                    CardRow(
                        id=c.id, family=c.family, title=c.title, kind=c.kind, status=c.status, appliers=c.appliers
                    ).model_dump()
                    for c in rows
                ]
            }
        )

    @mcp.resource("irscope://cards/{card_id}", name="card", mime_type="text/markdown")
    @guarded_resource
    def card(card_id: str) -> str:
        """A pattern card's text."""
        c = default_index().cards.get(card_id)
        if c is None or c.path is None:
            raise ValueError(f"no card {card_id!r}; irscope://cards lists them")
        return c.path.read_text()
