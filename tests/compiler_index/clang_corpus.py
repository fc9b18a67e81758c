"""The corpus as a built project: a copy with the compile_commands.json CMake would write for it (absolute paths, real
flags), for the libclang backend's tests and for timing both backends by hand:

    .venv/bin/python -m tests.compiler_index.clang_corpus /tmp/clang-corpus
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

from tests.compiler_index.conftest import CORPUS, CORPUS_DEPS

SINK = "lib/Dialect/ToyGPU/Transforms/SinkRelayouts.cpp"
UTILITY = "lib/Dialect/ToyGPU/Transforms/Utility.cpp"
VECTORIZE = "lib/Dialect/ToyGPU/Transforms/VectorizeLoads.cpp"
OPS = "lib/Dialect/ToyGPU/IR/Ops.cpp"
# every C++ file of the corpus but the toyhw backend's (a backend not built: its files stay with tree-sitter)
TRANSLATION_UNITS = [
    VECTORIZE,
    UTILITY,
    "lib/Dialect/ToyGPU/Transforms/FuseRelayouts.cpp",
    SINK,
    OPS,
    "lib/Conversion/ToyGPUToLLVM/BarrierOpToLLVM.cpp",
    "lib/Conversion/ToyGPUToLLVM/RefLowering.cpp",
    "python/src/passes.cc",
]


def write_compile_commands(
    root: Path,
    units: list[str] = TRANSLATION_UNITS,
    deps: bool = True,
    where: str = "compile_commands.json",
    extra: tuple[str, ...] = (),
) -> Path:
    """What CMake would write for the corpus built in `root`: the corpus's own include directory relative to the
    build directory, the stand-ins' absolute (`deps=False` leaves them out: MLIR's headers not found); `arguments`
    and `command` entries alternate."""
    entries = []
    for i, unit in enumerate(units):
        args = [
            "/usr/bin/c++",
            "-std=c++17",
            "-Iinclude",
            *([f"-I{CORPUS_DEPS}"] if deps else []),
            "-Wall",
            *extra,
            "-o",
            f"build/{unit}.o",
            "-c",
            str(root / unit),
        ]
        entry = {"directory": str(root), "file": str(root / unit), "output": f"build/{unit}.o"}
        entry.update({"arguments": args} if i % 2 else {"command": shlex.join(args)})
        entries.append(entry)
    path = root / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, indent=1))
    return path


def copy_corpus(dest: Path) -> Path:
    return Path(shutil.copytree(CORPUS, dest))


if __name__ == "__main__":
    if len(sys.argv) != 2 or Path(sys.argv[1]).exists():
        sys.exit("usage: python -m tests.compiler_index.clang_corpus NEW_DIR")
    target = copy_corpus(Path(sys.argv[1]).resolve())
    print(write_compile_commands(target))
