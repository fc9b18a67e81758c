"""`python -m tests.ladder.without_extras ARGS…`: the `ladder` CLI as on the GPU machine, where tree-sitter and the
openai client are not installed: importing them fails, so a command that needs them fails the test that runs it."""

from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder

ABSENT = ("tree_sitter", "tree_sitter_cpp", "tree_sitter_language_pack", "openai")


class Absent(MetaPathFinder):
    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.split(".")[0] in ABSENT:
            raise ModuleNotFoundError(f"No module named {name!r} (absent on the GPU machine)", name=name)


if __name__ == "__main__":
    sys.meta_path.insert(0, Absent())
    from ladder.cli import main

    sys.exit(main(sys.argv[1:]))
