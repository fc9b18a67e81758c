"""Which MLIR parser irscope uses, decided by measurement: our line parser vs tree-sitter-mlir vs libtriton's
own MLIR API, on texts from a real capture (TTGIR, LLVM dialect) and a whole MLIR_ENABLE_DUMP stream.

    python tools/parser_choice.py [--runs 3]

Prints seconds (median), operations found, and whether each parser yields every op's location.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import tree_sitter
import tree_sitter_mlir
from triton._C import libtriton

import irscope
from irscope.examples import EXAMPLES
from irscope.parse import parse_mlir
from irscope.targets import DEFAULT_TARGET

_DUMP_CHILD = """
import os
os.environ["MLIR_ENABLE_DUMP"] = "1"
import triton
from irscope.capture import build_request
from irscope.examples import EXAMPLES
ex = EXAMPLES["matmul"]
req = build_request(ex.kernel, ex.args, dict(ex.options))  # the default target
triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
"""


def ours(text: str) -> tuple[int, bool]:
    mod = parse_mlir(text)
    return len(mod.ops), True


def tree_sitter_count(text: str) -> tuple[int, bool]:
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_mlir.language()))
    tree = parser.parse(text.encode())
    n, stack = 0, [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "operation":
            n += 1
        stack.extend(node.children)
    return n, True  # trailing_location nodes are there; resolving aliases is still ours to write


def libtriton_count(text: str) -> tuple[int, bool]:
    ctx = libtriton.ir.context()
    libtriton.ir.load_dialects(ctx)
    libtriton.nvidia.load_dialects(ctx)
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        mod = libtriton.ir.parse_mlir_module(f.name, ctx)
        mod.context = ctx
        count = [0]
        mod.walk(lambda op: count.__setitem__(0, count[0] + 1))
        return count[0], False  # no op locations: only through a result value, none for result-less ops
    finally:
        os.unlink(f.name)


def timed(fn, text: str, runs: int) -> tuple[float, int, bool]:
    times, result = [], (0, False)
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn(text)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), *result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    ex = EXAMPLES["matmul"]
    traj = irscope.capture(ex.kernel, target=DEFAULT_TARGET, disassemble=False, kernel_kwargs=ex.args, **ex.options)
    llir = [s for s in traj.stage_snapshots("llir") if s.kind == "mlir"]
    samples = {
        "ttgir (final)": traj.stage_output("ttgir").text,
        "llvm dialect (final)": llir[-1].text,
        "llvm dialect (largest)": max((s.text for s in llir), key=len),
    }
    with tempfile.TemporaryDirectory() as d:
        dump = subprocess.run(
            [sys.executable, "-c", _DUMP_CHILD],
            capture_output=True,
            text=True,
            env=dict(os.environ, TRITON_CACHE_DIR=d),
            check=True,
        ).stderr
    samples["MLIR_ENABLE_DUMP stream"] = dump
    print(f"{'text':<26}{'MB':>7}  {'parser':<14}{'s':>8}{'ops':>9}  locations")
    for name, text in samples.items():
        for label, fn in (("irscope", ours), ("tree-sitter", tree_sitter_count), ("libtriton", libtriton_count)):
            if label == "libtriton" and name.startswith("MLIR_ENABLE_DUMP"):
                print(f"{name:<26}{len(text) / 1e6:>7.2f}  {label:<14}{'—':>8}{'—':>9}  one module per file only")
                continue
            s, n, locs = timed(fn, text, a.runs)
            print(f"{name:<26}{len(text) / 1e6:>7.2f}  {label:<14}{s:>8.3f}{n:>9}  {'yes' if locs else 'no'}")


if __name__ == "__main__":
    main()
