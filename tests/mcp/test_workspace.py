"""The workspace rule on its own: what resolves inside the root is served, everything else is refused with the
reason, and the server's own directory cannot be redirected out of it by a planted link."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_server.workspace import Workspace, WorkspaceError


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "sub" / "k.py").write_text("")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "k.py").write_text("")
    return Workspace.open(tmp_path / "root")


def test_paths_inside_resolve(ws: Workspace):
    assert ws.path("sub/k.py", kind="file") == ws.root / "sub" / "k.py"
    assert ws.path("sub/../sub/k.py") == ws.root / "sub" / "k.py"  # `..` that stays inside is fine
    assert ws.path(str(ws.root / "sub"), kind="dir") == ws.root / "sub"
    (ws.root / "inner_link.py").symlink_to(ws.root / "sub" / "k.py")
    assert ws.path("inner_link.py") == ws.root / "sub" / "k.py"


@pytest.mark.parametrize("given", ["../outside/k.py", "sub/../../outside/k.py", "/etc/hostname", "/"])
def test_paths_outside_are_refused(ws: Workspace, given: str):
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.path(given, must_exist=False)


def test_links_out_are_refused(ws: Workspace):
    (ws.root / "out_link.py").symlink_to(ws.root.parent / "outside" / "k.py")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.path("out_link.py")


def test_kind_and_existence(ws: Workspace):
    with pytest.raises(WorkspaceError, match="no such file"):
        ws.path("sub/nope.py")
    with pytest.raises(WorkspaceError, match="not a file"):
        ws.path("sub", kind="file")
    with pytest.raises(WorkspaceError, match="empty path"):
        ws.path("")


def test_fresh_directories_take_the_next_free_name(ws: Workspace):
    assert [ws.fresh("trajectories", "k").name for _ in range(3)] == ["k", "k-2", "k-3"]
    with pytest.raises(WorkspaceError, match="name"):
        ws.fresh("trajectories", "../k")


def test_a_planted_link_cannot_redirect_the_servers_writes(ws: Workspace):
    (ws.root / ".irscope-mcp").symlink_to(ws.root.parent / "outside")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.fresh("trajectories", "k")
    assert not (ws.root.parent / "outside" / "trajectories").exists()
