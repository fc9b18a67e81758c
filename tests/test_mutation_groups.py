"""tools/mutation.py's groups stay runnable as the code moves: each group's patterns name files that exist, its
tests exist, and the pyproject.toml it writes for mutmut is the project's plus a `[tool.mutmut]` table that mutates
those files and selects those tests (the run itself is `make mutation`, not part of CI)."""

import tomllib
from fnmatch import fnmatch

from tools.mutation import GROUPS, PACKAGES, REPO, config

SOURCES = [p.relative_to(REPO).as_posix() for pkg in PACKAGES for p in (REPO / pkg).glob("**/*.py")]


def test_every_group_mutates_existing_files_with_existing_tests():
    assert len({g.name for g in GROUPS}) == len(GROUPS)
    for g in GROUPS:
        for pattern in g.modules:
            assert any(fnmatch(f, pattern) for f in SOURCES), f"{g.name}: {pattern} matches no file"
        for t in g.tests:
            assert (REPO / t.split("::", 1)[0]).exists(), f"{g.name}: no test {t}"


def test_the_written_config_is_the_projects_plus_the_groups_mutmut_table():
    group = GROUPS[0]
    written = tomllib.loads(config(group))
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert {k: v for k, v in written.items() if k != "tool"} == {k: v for k, v in project.items() if k != "tool"}
    assert written["tool"]["pytest"] == project["tool"]["pytest"]
    table = written["tool"]["mutmut"]
    assert table["only_mutate"] == list(group.modules)
    assert table["pytest_add_cli_args_test_selection"] == list(group.tests)
    assert table["process_isolation"] == "forkserver"
