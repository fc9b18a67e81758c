"""tritonparse's trace format as irscope reads and writes it (read from tritonparse 0.6.0: its structured logger,
its parser and its JSON Schemas, `tritonparse/validation/schemas/compilation.schema.json`).

A compilation record: `{"event_type": "compilation", "pid", "timestamp", "stack", "payload": {"metadata",
"file_path", "file_content", "python_source", …}}`. `file_content` maps `<kernel>.<ext>` to the text of each stage
Triton wrote to its cache (`.ttir .ttgir .llir .ptx .amdgcn`, the metadata `.json`, SASS when tritonparse
disassembled the cubin); `file_path` names every file, binaries included. tritonparse's parser adds
`source_mappings` (per stage: IR line → Python line and the lines of the other stages) and `ir_stages`; the viewer
reads `file_content`, `source_mappings`, `python_source` and `metadata`, and passes other fields through.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from irscope.capture.builder import LLVM_STAGE
from irscope.trajectory import AMDGCN, LLVM_IR, MLIR, PTX

COMPILATION = "compilation"
# The layout of irscope's own payload field (`irscope`): `irscope export` writes it, `irscope import` restores a
# trajectory from a field of this layout only.
EXTRA_VERSION = 1
# Event types tritonparse 0.6 writes besides compilations (raw traces and its parser's *_mapped output).
OTHER_EVENTS = frozenset(
    {
        "launch",
        "autotune",
        "launch_diff",
        "ir_analysis",
        "autotune_analysis",
        "autotune_summary",
        "roofline",
    }
)
# Fields of a compilation record and of its payload in tritonparse 0.6 (irscope's own: `irscope`); others are
# from a newer tritonparse, and an import says it ignored them.
RECORD_FIELDS = frozenset(
    {"event_type", "pid", "timestamp", "stack", "payload", "occurrence_id", "is_fake", "fake_reason"}
)
PAYLOAD_FIELDS = frozenset(
    {
        "metadata",
        "file_content",
        "file_path",
        "python_source",
        "pt_info",
        "source_mappings",
        "ir_stages",
        "irscope",
    }
)
# What tritonparse's structured logger adds to Triton's compile metadata (the rest is Triton's own `.json`).
TRACER_METADATA = frozenset({"cache_hit", "env", "src_attrs", "src_cache_key", "src_constants", "times"})
# Triton's compile metadata that is not a backend option (the rest is the options the backend parsed).
NOT_OPTIONS = frozenset(
    {
        "hash",
        "target",
        "name",
        "shared",
        "tmem_size",
        "global_scratch_size",
        "global_scratch_align",
        "profile_scratch_size",
        "profile_scratch_align",
        "triton_version",
        "tensordesc_meta",
        "num_warps_base",
    }
)
# A placeholder tritonparse stores instead of a stage's text: "<file too large: N bytes>", "<error reading …>",
# "<nvdisasm failed: …>".
PLACEHOLDER_PREFIX = "<"


@dataclass(frozen=True)
class Stage:
    """One text stage: tritonparse's file extension and stage name, irscope's stage and snapshot kind."""

    extension: str
    name: str  # tritonparse's (and Triton's) stage name
    stage: str  # irscope's
    kind: str


# In pipeline order. Triton's `llir` is LLVM IR, irscope's stage `llvm` (irscope's `llir` is the LLVM-dialect MLIR
# between ttgir and the translation, which Triton keeps in memory only).
STAGES = (
    Stage(".ttir", "ttir", "ttir", MLIR),
    Stage(".ttgir", "ttgir", "ttgir", MLIR),
    Stage(".ttadapter", "ttadapter", "ttadapter", MLIR),
    Stage(".llir", "llir", LLVM_STAGE, LLVM_IR),
    Stage(".ptx", "ptx", "ptx", PTX),
    Stage(".amdgcn", "amdgcn", "amdgcn", AMDGCN),
)
BY_EXTENSION = {s.extension: s for s in STAGES}
SASS = ".sass"  # an irscope artifact, a tritonparse stage (disassembled by tritonparse when asked to)
BINARIES = {"cubin": ".cubin", "hsaco": ".hsaco"}  # named in file_path only: file_content holds text


def extension(file_name: str) -> str:
    """`.ttgir` of `kernel.ttgir` (tritonparse keys files by `<kernel>.<ext>`)."""
    dot = file_name.rfind(".")
    return file_name[dot:] if dot >= 0 else ""


def is_full_file(python_source: dict[str, Any]) -> bool:
    """Whether tritonparse's `python_source` holds the kernel's whole file (from line 1, with the function's own
    range in `function_start_line`) rather than the function alone at its own lines."""
    return python_source.get("start_line", 1) == 1 and "function_start_line" in python_source


def is_placeholder(text: str) -> bool:
    return text.startswith(PLACEHOLDER_PREFIX) and text.endswith(">") and "\n" not in text.strip()
