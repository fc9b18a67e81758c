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
    (tmp_path / "root-evil").mkdir()  # a sibling whose name starts with the root's: outside all the same
    (tmp_path / "root-evil" / "k.py").write_text("")
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


def test_a_sibling_that_shares_the_roots_name_as_a_prefix_is_outside(ws: Workspace):
    """`root-evil` beside `root`: a confinement by string prefix would take it for inside."""
    evil = ws.root.parent / "root-evil"
    for given in ("../root-evil/k.py", str(evil / "k.py"), str(evil)):
        with pytest.raises(WorkspaceError, match="outside the workspace"):
            ws.path(given)
    (ws.root / ".irscope-mcp").symlink_to(evil)
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.state("home")
    assert list(evil.iterdir()) == [evil / "k.py"]
    assert ws.relative(evil / "k.py") == str(evil / "k.py")  # named in full, not as if it were inside


def test_relative_names_paths_inside_by_their_place_in_the_root(ws: Workspace):
    assert ws.relative(ws.root / "sub" / "k.py") == "sub/k.py"
    assert ws.relative(ws.root.parent / "outside" / "k.py") == str(ws.root.parent / "outside" / "k.py")


def test_state_nests_its_parts_under_the_servers_directory(ws: Workspace):
    assert ws.state("a", "b") == ws.root / ".irscope-mcp" / "a" / "b"
    assert (ws.root / ".irscope-mcp" / "a" / "b").is_dir()


def test_a_workspace_must_be_a_directory(tmp_path: Path):
    (tmp_path / "f").write_text("")
    for given in (tmp_path / "f", tmp_path / "none"):
        with pytest.raises(WorkspaceError, match=f"workspace {given}: not a directory"):
            Workspace.open(given)


def test_links_out_are_refused(ws: Workspace):
    (ws.root / "out_link.py").symlink_to(ws.root.parent / "outside" / "k.py")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.path("out_link.py")


def test_kind_and_existence(ws: Workspace):
    with pytest.raises(WorkspaceError, match="no such file"):
        ws.path("sub/nope.py")
    with pytest.raises(WorkspaceError, match="not a file"):
        ws.path("sub", kind="file")
    with pytest.raises(WorkspaceError, match="not a directory"):
        ws.path("sub/k.py", kind="dir")
    assert ws.path("sub", kind="dir") == ws.root / "sub"
    for given in ("", "sub/k.py\x00"):  # NUL would reach the OS as an error of another kind
        with pytest.raises(WorkspaceError, match=r"^empty path: give a path inside the workspace$"):
            ws.path(given)


def test_fresh_directories_take_the_next_free_name(ws: Workspace):
    assert [ws.fresh("trajectories", "k").name for _ in range(3)] == ["k", "k-2", "k-3"]
    with pytest.raises(WorkspaceError, match="name"):
        ws.fresh("trajectories", "../k")


def test_fresh_gives_up_after_ten_thousand_of_one_name(ws: Workspace):
    base = ws.state("runs")
    for n in range(1, 10_000):
        (base / ("k" if n == 1 else f"k-{n}")).mkdir()
    with pytest.raises(WorkspaceError, match=r"^runs/k: too many directories of that name; remove some$"):
        ws.fresh("runs", "k")
    assert not (base / "k-10000").exists()


def test_a_planted_link_cannot_redirect_the_servers_writes(ws: Workspace):
    (ws.root / ".irscope-mcp").symlink_to(ws.root.parent / "outside")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.fresh("trajectories", "k")
    assert not (ws.root.parent / "outside" / "trajectories").exists()
