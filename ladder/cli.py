"""`ladder`: diagnosis and optimization loop. Subcommands are discovered in ladder/commands/."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import ladder.commands as commands_pkg
from irscope.version import add_version_argument
from ladder.commands.base import Command


def discover() -> dict[str, Command]:
    found: dict[str, Command] = {}
    for info in pkgutil.iter_modules(commands_pkg.__path__):
        if info.name == "base":
            continue
        cmd = getattr(importlib.import_module(f"ladder.commands.{info.name}"), "COMMAND", None)
        if isinstance(cmd, Command):
            found[cmd.name] = cmd
    return dict(sorted(found.items()))


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Command]]:
    parser = argparse.ArgumentParser(prog="ladder", description=__doc__)
    add_version_argument(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    cmds = discover()
    for cmd in cmds.values():
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
    return parser, cmds


def main(argv: list[str] | None = None) -> int:
    parser, cmds = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return cmds[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
