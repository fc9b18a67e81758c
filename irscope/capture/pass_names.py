"""MLIR pass names (`TritonGPUCoalesce`) for pass arguments (`tritongpu-coalesce`).

Python sees only a pass's argument (from the pipeline string). The names come from the compiler itself:
`python -m irscope.capture.pass_names` compiles the bundled examples for each backend in a subprocess with
`MLIR_ENABLE_DUMP=1` and reads the "IR Dump Before NAME (ARG)" headers into irscope/data/pass_names.json.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data" / "pass_names.json"
DUMP_HEADER = re.compile(
    r"^// -----// IR Dump Before (\S+) \((.*?)\) \('(.*?)' operation(?:: @(\S+))?\) //----- //$", re.M
)


@cache
def _table() -> dict[str, str]:
    if not DATA.exists():
        return {}
    return json.loads(DATA.read_text())["names"]


def pass_name(pass_arg: str) -> str | None:
    if "," in pass_arg:  # one adder that added several passes
        names = [_table().get(a) for a in pass_arg.split(",")]
        return ",".join(n or a for n, a in zip(names, pass_arg.split(","))) if any(names) else None
    return _table().get(pass_arg)


def dump_headers(text: str) -> list[tuple[str, str, str]]:
    """(name, arg, anchor op) of each module-or-function-level 'IR Dump Before' header, in order."""
    return [(m.group(1), m.group(2), m.group(3)) for m in DUMP_HEADER.finditer(text)]


_DUMP_SCRIPT = """
import os, sys
os.environ["MLIR_ENABLE_DUMP"] = "1"
import triton
from triton import knobs
knobs.compilation.always_compile = True
from irscope.examples import EXAMPLES
from irscope.capture.specialize import build_request
for target in sys.argv[1:]:
    for ex in EXAMPLES.values():
        req = build_request(ex.kernel, ex.args, dict(ex.options), target)
        triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
"""


def collect(targets: list[str]) -> dict[str, str]:
    """Run the dump in a subprocess (MLIR_DUMP_PATH latches per process) and map argument → name."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TRITON_CACHE_DIR=cache)
        proc = subprocess.run(
            [sys.executable, "-c", _DUMP_SCRIPT, *targets], capture_output=True, text=True, env=env, check=True
        )
    return {arg: name for name, arg, _ in dump_headers(proc.stderr)}


def main() -> None:
    import triton

    from irscope.targets import DEFAULT_TARGET

    names = collect([DEFAULT_TARGET, "cuda:80", "hip:gfx942"])
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(
        json.dumps(
            {
                "triton_version": triton.__version__,
                "how": "python -m irscope.capture.pass_names (MLIR_ENABLE_DUMP headers of the bundled examples)",
                "names": dict(sorted(names.items())),
            },
            indent=1,
        )
        + "\n"
    )
    print(f"{len(names)} pass names → {DATA}")


if __name__ == "__main__":
    main()
