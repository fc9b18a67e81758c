"""Trajectories → a tritonparse trace: one compilation record per trajectory, as tritonparse's structured logger
writes it, with the source mappings its parser would add, so that its parser and its viewer read it as they read
their own.

Where tritonparse has a place, irscope's data goes there: each stage's output in `file_content` (`.ttir .ttgir
.llir .ptx .amdgcn`, SASS as `.sass`, Triton's metadata as `.json`), the kernel's whole file in `python_source` (its
full-file form), Triton's metadata with the specialization (`src_constants`, `src_attrs`) and the stage times
(`times`) in `metadata`. What it has no place for goes into the payload field `irscope`, which tritonparse's
parser passes through and its viewer ignores: the counters of each stage's output, the passes that changed the
IR, and (unless `stages_only`) the whole trajectory, every pass's snapshot with its pass name, from which
`irscope import` restores it exactly.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from irscope import signatures
from irscope.capture.builder import LLVM_STAGE
from irscope.interop.tritonparse.format import BINARIES, COMPILATION, EXTRA_VERSION, SASS, STAGES, TRACER_METADATA
from irscope.interop.tritonparse.sourcemap import source_mappings
from irscope.report.irlines import SASS as SASS_KIND
from irscope.trajectory import FORMAT_VERSION, Trajectory
from irscope.views import finished, partial_note


@dataclass
class Exported:
    kernel: str
    stages: list[str]  # tritonparse's stage names written to file_content
    passes: int  # snapshots carried in the `irscope` field (0: stages only)
    notes: list[str] = field(default_factory=list)


def compilation_record(traj: Trajectory, stages_only: bool = False) -> tuple[dict[str, Any], Exported]:
    """The compilation record of `traj` (a loaded trajectory) and what went into it."""
    assert traj.root is not None, "export reads a trajectory from its directory"
    name = traj.kernel.name
    done = finished(traj)
    info = Exported(name, [], 0)
    contents: dict[str, str] = {}
    paths: dict[str, str] = {}
    mapped: dict[str, tuple[str, str]] = {}
    for stage in STAGES:
        if stage.stage not in traj.stages:
            continue
        if stage.stage not in done:
            info.notes.append(f"{stage.name} not exported: the compile stopped in it ({traj.error or 'incomplete'})")
            continue
        snap = traj.stage_output(stage.stage)
        key = f"{name}{stage.extension}"
        contents[key] = snap.text
        paths[key] = str((traj.root / snap.ir_file).absolute())
        mapped[stage.name] = (snap.kind, snap.text)
        info.stages.append(stage.name)
    if not info.stages:
        raise ValueError(
            f"{traj.root}: no stage finished ({partial_note(traj, traj.kernel.name)}): nothing a trace could show"
        )
    for art_name, ext in BINARIES.items():
        if art_name in traj.artifacts:
            paths[f"{name}{ext}"] = str((traj.root / traj.artifacts[art_name].file).absolute())
    sass = _sass(traj, info)
    if sass is not None:
        contents[f"{name}{SASS}"] = sass
        paths[f"{name}{SASS}"] = str((traj.root / traj.artifacts["sass"].file).absolute())
        mapped["sass"] = (SASS_KIND, sass)
        info.stages.append("sass")
    metadata = _metadata(traj)
    contents[f"{name}.json"] = json.dumps({k: v for k, v in metadata.items() if k not in TRACER_METADATA})
    payload: dict[str, Any] = {"metadata": metadata, "file_path": paths, "file_content": contents}
    python = _python_source(traj)
    if python is not None:
        payload["python_source"] = python
    # one analysis per trajectory: the mappings attribute lines exactly as irscope's own per-line counters do
    analyzer = signatures.Analyzer(traj)
    payload["source_mappings"] = source_mappings(mapped, traj.kernel.source_file, analyzer.resolver)
    payload["irscope"] = _extra(traj, stages_only, analyzer)
    info.passes = 0 if stages_only else len(traj.snapshots)
    origin = traj.origin or {}
    record = {
        "event_type": COMPILATION,
        # no traced process compiled it: the one tritonparse recorded, for a trajectory imported from its trace
        "pid": origin.get("pid", 0),
        "timestamp": origin.get("timestamp") or traj.created,
        "stack": [],
        "payload": payload,
    }
    return record, info


def _sass(traj: Trajectory, info: Exported) -> str | None:
    art = traj.artifacts.get("sass")
    if art is None:
        return None
    try:
        data = art.data  # a derived SASS is made from the cubin now if the capture's background run did not finish
    except (OSError, RuntimeError, ValueError) as e:
        info.notes.append(f"sass not exported: {e}")
        return None
    return data if isinstance(data, str) else None


def _metadata(traj: Trajectory) -> dict[str, Any]:
    """Triton's compile metadata as tritonparse's logger records it; a trajectory imported from a trace keeps the
    trace's. irscope does not record Triton's cache hash, so a captured one gets a hash of its stage outputs."""
    if traj.origin and isinstance(traj.origin.get("metadata"), dict):
        return dict(traj.origin["metadata"])
    res = traj.resources
    outputs = "".join(traj.stage_output(s).sha1 for s in traj.stages)
    meta: dict[str, Any] = {
        "hash": hashlib.sha256(f"{traj.kernel.name}:{outputs}".encode()).hexdigest(),
        "target": traj.target.to_json(),
        **traj.specialization.options,
        "name": traj.kernel.name,
    }
    for key, ours in (("shared", "shared_bytes"), ("tmem_size", "tmem_size"), ("global_scratch_size", None)):
        value = res.get(ours or key)
        if value is not None:
            meta[key] = value
    if "triton" in traj.versions:
        meta["triton_version"] = traj.versions["triton"]
    names = list(traj.specialization.signature)
    meta["src_constants"] = {f"({names.index(n)},)": v for n, v in traj.specialization.constexprs.items() if n in names}
    meta["src_attrs"] = {f"({names.index(n)},)": a for n, a in traj.specialization.attrs.items() if a and n in names}
    times = _times(traj)
    if times:
        meta["times"] = times
    return meta


def _times(traj: Trajectory) -> dict[str, Any]:
    """Triton's CompileTimes (microseconds; its `llir` stage is irscope's llir and llvm together)."""
    stage_ms: dict[str, float] = dict(traj.times.get("stage_ms", {}))
    if LLVM_STAGE in stage_ms:
        stage_ms["llir"] = stage_ms.get("llir", 0.0) + stage_ms.pop(LLVM_STAGE)
    if not stage_ms:
        return {}
    out: dict[str, Any] = {"lowering_stages": [[k, round(v * 1e3)] for k, v in stage_ms.items()]}
    if "frontend_ms" in traj.times:
        out["ir_initialization"] = round(traj.times["frontend_ms"] * 1e3)
    return out


def _python_source(traj: Trajectory) -> dict[str, Any] | None:
    """The kernel's whole file in tritonparse's full-file form; the trace's own form for an imported trajectory."""
    k = traj.kernel
    if not k.source:
        return None
    lines = k.source.split("\n")
    form = (traj.origin or {}).get("python_source")
    if isinstance(form, dict) and form.get("start_line", 1) != 1:
        start, end = form["start_line"], form.get("end_line", len(lines))  # the schema does not require it
        return {**form, "code": "\n".join(lines[start - 1 : end]) + "\n"}
    start = k.first_line
    while start > 1 and lines[start - 2].lstrip().startswith("@"):  # tritonparse's function range has decorators
        start -= 1
    return {
        "file_path": k.source_file,
        "start_line": 1,
        "end_line": len(lines),
        "code": k.source,
        "function_start_line": start,
        "function_end_line": k.last_line,
    }


def _extra(traj: Trajectory, stages_only: bool, analyzer: signatures.Analyzer) -> dict[str, Any]:
    counters: dict[str, dict[str, float]] = {}
    for name, value in signatures.summary(traj, analyzer).items():
        stage, _, counter = name.partition(".")
        counters.setdefault(stage, {})[counter] = value
    extra: dict[str, Any] = {
        "version": EXTRA_VERSION,
        "counters": counters,
        "changed_passes": [
            {"snapshot": s.index, "stage": s.stage, "pass_arg": s.pass_arg, "pass_name": s.pass_name}
            for s in traj.changed_passes()
        ],
    }
    if stages_only:
        return extra
    doc = traj.to_json()
    texts: dict[str, str] = {}
    for s in traj.snapshots:
        texts.setdefault(s.sha1, s.text)
    artifacts: dict[str, dict[str, str]] = {}
    for name, art in traj.artifacts.items():
        try:
            data = art.data
        except (OSError, RuntimeError, ValueError):
            doc["artifacts"].pop(name)  # a derived one that cannot be made here: left out, not half-described
            continue
        artifacts[name] = {"base64": base64.b64encode(data).decode()} if isinstance(data, bytes) else {"text": data}
    return {
        **extra,
        "format_version": FORMAT_VERSION,
        "trajectory": doc,
        "texts": texts,
        "artifacts": artifacts,
        "source": traj.kernel.source,
    }


def _open(path: Path, compress: bool) -> IO[str]:
    if compress:  # one gzip stream: tritonparse's reader and its viewer read it as they read their own .gz
        return gzip.open(path, "wt", encoding="utf-8")
    return open(path, "w", encoding="utf-8")


def export(trajectories: Iterable[Trajectory], out: Path, stages_only: bool = False) -> list[Exported]:
    """Write one compilation record per trajectory to `out` (gzip-compressed when it ends in .gz), one at a time;
    `out` appears only once complete."""
    written: list[Exported] = []
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with _open(tmp, out.suffix == ".gz") as f:
        for traj in trajectories:
            record, info = compilation_record(traj, stages_only)
            f.write(json.dumps(record) + "\n")
            written.append(info)
    tmp.replace(out)
    return written
