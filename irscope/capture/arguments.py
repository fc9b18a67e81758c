"""A kernel's specialization as the command lines spell it: one definition for `irscope dump` and
`ladder diagnose FILE.py:KERNEL`, so the same arguments specialize the same kernel the same way."""

from __future__ import annotations

import argparse
from typing import Any

from irscope.argtypes import positive
from irscope.capture.specialize import SpecError, parse_value
from irscope.targets import DEFAULT_TARGET

COMPILE_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def add_specialization_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--target",
        default=DEFAULT_TARGET,
        help="cuda:90 (default), cuda:80, hip:gfx942, …, ascend / npu:<SoC> (docs/ascend.md)",
    )
    p.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a kernel argument: 4096, 1e-5, true, *fp16 (16-byte aligned pointer), "
        "*fp16:4 (4-byte aligned), fp32[1024,512] (tensor)",
    )
    p.add_argument(
        "--constexpr", action="append", default=[], metavar="NAME=VALUE", help="a tl.constexpr parameter's value"
    )
    p.add_argument("--num-warps", type=positive, help="warps per program (the JIT's default: 4)")
    p.add_argument("--num-stages", type=positive, help="software-pipelining stages (the JIT's default: 3)")
    p.add_argument("--num-ctas", type=positive, help="CTAs per cluster (Hopper)")
    p.add_argument("--maxnreg", type=positive, help="register cap per thread handed to ptxas")


def pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SpecError(f"{what} {item!r}: expected NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def specialization(a: argparse.Namespace) -> tuple[dict[str, str], dict[str, Any]]:
    """(runtime arguments as spec strings, constexprs and compile options) from parsed arguments."""
    options: dict[str, Any] = {k: parse_value(v) for k, v in pairs(a.constexpr, "--constexpr").items()}
    for opt in COMPILE_OPTIONS:
        if getattr(a, opt) is not None:
            options[opt] = getattr(a, opt)
    return pairs(a.arg, "--arg"), options
