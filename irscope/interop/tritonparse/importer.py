"""A tritonparse trace → one irscope trajectory per compilation, in DIR/NNN-<kernel>/.

A record that carries irscope's own field (`irscope export` wrote it) is restored as it was captured, every pass.
Any other compilation becomes a stage-level trajectory: one snapshot per stage the trace holds (the stage's output,
pass `<all-passes>`), SASS when tritonparse disassembled it, the kernel's source at its own line numbers, the
specialization restated from the TTIR and the metadata, Triton's metadata kept as the trajectory's `origin`. Where
the trace has the source and the specialization, the import also states the `irscope dump` that captures the
kernel per pass on this machine (no GPU), and runs it with `recapture`.

The trace is read twice, a record at a time: first to check every line (a damaged trace imports nothing), then
to convert; memory holds one record and one trajectory, however many kernels the trace has.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscope.interop.tritonparse.format import (
    BY_EXTENSION,
    COMPILATION,
    EXTRA_VERSION,
    NOT_OPTIONS,
    OTHER_EVENTS,
    PAYLOAD_FIELDS,
    RECORD_FIELDS,
    SASS,
    STAGES,
    TRACER_METADATA,
    Stage,
    extension,
    is_full_file,
    is_placeholder,
)
from irscope.interop.tritonparse.reader import Record, TraceError, records
from irscope.interop.tritonparse.recapture import capture_again, dump_arguments, passes_directory
from irscope.interop.tritonparse.restate import Restated, restate
from irscope.store import OutputDirError, TrajectoryFormatError, from_json, save, validate
from irscope.targets import Target, TargetError, parse_target
from irscope.trajectory import FORMAT_VERSION, Artifact, KernelInfo, Snapshot, Trajectory, sha1
from irscope.version import __version__

MANIFEST = "import.json"  # in DIR: what the import wrote, so that importing again into DIR replaces it
STAGE_PASS = "<all-passes>"  # the pass of a stage-level snapshot: every pass of the stage at once
STAGE_PASS_NAME = "the stage's passes (the trace holds its output only)"
_UNSAFE = re.compile(r"[^\w.-]")  # in a kernel's name, for its directory's
SOURCES = "sources"  # DIR/sources/NNN-<kernel>/: a runnable kernel file for the per-pass capture (original absent)


@dataclass
class Imported:
    line: int  # of the compilation record in the trace
    kernel: str
    directory: Path
    stages: list[str]
    per_pass: bool  # restored from irscope's own field: every pass
    recapture: list[str] | None = None  # `irscope dump` arguments that capture it per pass
    why_not: str | None = None  # why there are none
    recaptured: Path | None = None
    recapture_note: str = ""

    def command(self) -> str | None:
        return shlex.join(["irscope", *self.recapture]) if self.recapture else None

    def diagnose_command(self) -> str | None:
        """The ladder on the same kernel and specialization (`ladder diagnose` takes `irscope dump`'s arguments)."""
        return shlex.join(["ladder", "diagnose", *self.recapture[1:-2]]) if self.recapture else None


@dataclass
class ImportResult:
    trace: Path
    out: Path
    kernels: list[Imported] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# -- the first pass: every line is a record, every compilation has what a trajectory needs -----------------------
@dataclass
class _Scan:
    compilations: int = 0
    other: Counter[str] = field(default_factory=Counter)
    unknown_events: Counter[str] = field(default_factory=Counter)
    unknown_fields: dict[str, int] = field(default_factory=dict)  # field → first line


def _scan(trace: Path) -> _Scan:
    scan = _Scan()
    for rec in records(trace):
        kind = rec.data["event_type"]
        if kind == COMPILATION:
            _check(trace, rec)
            scan.compilations += 1
            payload = rec.data["payload"]
            for name in [*(set(rec.data) - RECORD_FIELDS), *(f"payload.{k}" for k in set(payload) - PAYLOAD_FIELDS)]:
                scan.unknown_fields.setdefault(name, rec.line)
        elif kind in OTHER_EVENTS:
            scan.other[kind] += 1
        else:
            scan.unknown_events[kind] += 1
    return scan


def _check(trace: Path, rec: Record) -> None:
    """A compilation record's structure as tritonparse's schema states it."""
    where = f"{trace}:{rec.line}"

    def bad(what: str) -> TraceError:
        return TraceError(f"{where}: a compilation record {what}: the trace is damaged or not tritonparse's")

    payload = rec.data.get("payload")
    if not isinstance(payload, dict):
        raise bad("without a payload object")
    meta = payload.get("metadata")
    if not isinstance(meta, dict):
        raise bad("without payload.metadata")
    for key in ("name", "hash"):
        if not isinstance(meta.get(key), str) or not meta[key]:
            raise bad(f"without payload.metadata.{key}")
    for key in ("file_content", "file_path"):
        value = payload.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise bad(f"whose payload.{key} is not an object of strings")
    src = payload.get("python_source")
    if src is not None and not (
        isinstance(src, dict) and isinstance(src.get("code"), str) and isinstance(src.get("start_line", 1), int)
    ):
        raise bad("whose payload.python_source has no code and start_line")
    if not isinstance(payload.get("irscope", {}), dict):
        raise bad("whose payload.irscope is not an object")


# -- the second pass ------------------------------------------------------------------------------------------------
def import_trace(
    trace: str | Path, out: str | Path, recapture: bool = False, say: Callable[[str], None] | None = None
) -> ImportResult:
    """Import every compilation of `trace` into `out` (new, empty, or an earlier import's, which it replaces)."""
    trace, out = Path(trace), Path(out)
    say = say or (lambda _message: None)
    previous = _previous(out)
    scan = _scan(trace)
    result = ImportResult(trace, out)
    if scan.compilations == 0:
        seen = ", ".join(f"{n} {k}" for k, n in (scan.other + scan.unknown_events).most_common()) or "none"
        raise TraceError(
            f"{trace}: no compilation record (records: {seen}); tritonparse writes one when Triton compiles a "
            "kernel, and a program that found its kernels in Triton's cache logs launches only: trace it again "
            "with an empty cache (TRITON_CACHE_DIR=$(mktemp -d) or TRITON_ALWAYS_COMPILE=1)"
        )
    if scan.unknown_fields:
        fields = ", ".join(f"{k} (line {n})" for k, n in sorted(scan.unknown_fields.items(), key=lambda kv: kv[1]))
        result.notes.append(f"fields this irscope does not know, from a newer tritonparse? ignored: {fields}")
    if scan.unknown_events:
        kinds = ", ".join(f"{n} {k}" for k, n in scan.unknown_events.most_common())
        result.notes.append(f"records of event types this irscope does not know, ignored: {kinds}")
    if scan.other:
        kinds = ", ".join(f"{n} {k}" for k, n in scan.other.most_common())
        result.notes.append(f"not compilations, not imported: {kinds}")
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / SOURCES, ignore_errors=True)  # an earlier import's: written again where still needed
    hashes: dict[str, int] = {}
    for rec in records(trace):
        if rec.data["event_type"] != COMPILATION:
            continue
        meta = rec.data["payload"]["metadata"]
        if meta["hash"] in hashes:
            first = hashes[meta["hash"]]
            result.notes.append(f"line {rec.line}: {meta['name']} again (the same hash as line {first}): imported once")
            continue
        hashes[meta["hash"]] = rec.line
        say(f"[{len(hashes)}/{scan.compilations}] line {rec.line}: {meta['name']}")
        done = _import_record(trace, rec, out, len(result.kernels), result.notes)
        if done is None:
            continue
        imported, restated = done
        result.kernels.append(imported)
        if recapture and imported.recapture:
            say(f"  capturing {imported.kernel} per pass → {passes_directory(imported.directory)}")
            imported.recaptured, imported.recapture_note = capture_again(imported.recapture, restated, rec.data)
    _finish(result, previous)
    return result


def _previous(out: Path) -> list[str]:
    """The directories an earlier import wrote into `out` (replaced by this one); refuse any other content."""
    if out.exists() and not out.is_dir():
        raise OutputDirError(f"--out {out} is a file: give a directory for the imported trajectories")
    if not out.exists() or not any(out.iterdir()):
        return []
    manifest = out / MANIFEST
    if not manifest.is_file():
        raise OutputDirError(
            f"--out {out} holds files that are not an earlier import's: give a new or empty directory (an import "
            "writes one trajectory per compilation into it)"
        )
    try:
        doc = json.loads(manifest.read_text())
        return [k["directory"] for k in doc["kernels"]] + [k["recaptured"] for k in doc["kernels"] if k["recaptured"]]
    except (ValueError, KeyError, TypeError) as e:
        raise OutputDirError(f"{manifest} is damaged ({e}): remove {out} or give another directory") from None


def _finish(result: ImportResult, previous: list[str]) -> None:
    """Write the manifest; remove what an earlier import into the same directory wrote and this one did not."""
    kept = {k.directory.name for k in result.kernels} | {k.recaptured.name for k in result.kernels if k.recaptured}
    for name in previous:
        stale = result.out / name
        if name not in kept and "/" not in name and (stale / "trajectory.json").exists():
            shutil.rmtree(stale)
    doc = {
        "format": "irscope-import",
        "trace": str(result.trace),
        "irscope": __version__,
        "kernels": [
            {
                "directory": k.directory.name,
                "line": k.line,
                "kernel": k.kernel,
                "stages": k.stages,
                "per_pass": k.per_pass,
                "recapture": k.command(),
                "diagnose": k.diagnose_command(),
                "why_not": k.why_not,
                "recaptured": k.recaptured.name if k.recaptured else None,
                "recapture_note": k.recapture_note,
            }
            for k in result.kernels
        ],
        "notes": result.notes,
    }
    (result.out / MANIFEST).write_text(json.dumps(doc, indent=1) + "\n")


def _import_record(
    trace: Path, rec: Record, out: Path, ordinal: int, notes: list[str]
) -> tuple[Imported, Restated] | None:
    payload = rec.data["payload"]
    meta = payload["metadata"]
    name = meta["name"]
    directory = out / f"{ordinal:03d}-{_UNSAFE.sub('_', name)[:80]}"
    contents = payload.get("file_content", {})
    texts = {s: contents[f"{name}{s.extension}"] for s in STAGES if f"{name}{s.extension}" in contents}
    skipped = [f"{s.name} ({text})" for s, text in texts.items() if is_placeholder(text)]
    stages = [s for s, text in texts.items() if not is_placeholder(text)]
    if skipped:
        notes.append(f"line {rec.line}: {name}: stages tritonparse did not store, left out: {', '.join(skipped)}")
    unknown = sorted(
        {extension(k) for k in contents} - set(BY_EXTENSION) - {SASS, ".json"},
    )
    if unknown:
        notes.append(f"line {rec.line}: {name}: files irscope has no stage for, left out: {', '.join(unknown)}")
    if not stages:
        why = "a record tritonparse inferred from launches" if rec.data.get("is_fake") else "no stage text"
        notes.append(f"line {rec.line}: {name}: {why}, nothing to import")
        return None
    try:
        target = parse_target(Target(**meta["target"])) if isinstance(meta.get("target"), dict) else None
    except (TypeError, TargetError) as e:
        notes.append(f"line {rec.line}: {name}: its target {meta.get('target')} is not one irscope compiles for ({e})")
        return None
    if target is None:
        notes.append(f"line {rec.line}: {name}: its metadata names no target, not imported")
        return None
    src = payload.get("python_source")
    ttir = contents.get(f"{name}.ttir")
    restated = restate(meta, ttir if ttir and not is_placeholder(ttir) else None, src["code"] if src else None)
    extra = payload.get("irscope", {})
    traj = None
    if "trajectory" in extra:
        traj, problem = _restore(extra, {s.stage: contents[f"{name}{s.extension}"] for s in stages}, directory)
        if problem:
            notes.append(f"line {rec.line}: {name}: irscope's own field not used ({problem}); imported its stages")
    if traj is None:
        traj = _stage_level(trace, rec, target, stages, restated)
    save(traj, directory)
    per_pass = any(s.pass_arg != STAGE_PASS for s in traj.snapshots)
    imported = Imported(rec.line, name, directory, [s.name for s in stages], per_pass)
    if not per_pass:  # restored from irscope's field, it is per pass already
        sources = out / SOURCES / directory.name
        imported.recapture, imported.why_not = dump_arguments(restated, src, sources, passes_directory(directory))
    return imported, restated


def _stage_level(trace: Path, rec: Record, target: Target, stages: list[Stage], restated: Restated) -> Trajectory:
    payload = rec.data["payload"]
    meta = payload["metadata"]
    contents = payload["file_content"]
    name = meta["name"]
    times = _times(meta.get("times"))
    snapshots: list[Snapshot] = []
    for s in stages:
        text = contents[f"{name}{s.extension}"]
        digest = sha1(text)
        snapshots.append(
            Snapshot(
                index=len(snapshots),
                stage=s.stage,
                stage_index=0,
                pass_arg=STAGE_PASS,
                pass_name=STAGE_PASS_NAME,
                adder=None,
                pipeline=None,
                kind=s.kind,
                sha1=digest,
                changed=not snapshots or snapshots[-1].sha1 != digest,
                wall_ms=times.get("stage_ms", {}).get(s.stage, 0.0),
                _text=text,
            )
        )
    artifacts = {}
    sass = contents.get(f"{name}{SASS}")
    if sass is not None and not is_placeholder(sass):
        artifacts["sass"] = Artifact("sass", "", False, sha1(sass), _data=sass)
    resources = {
        ("shared_bytes" if k == "shared" else k): meta[k]
        for k in ("num_warps", "num_ctas", "num_stages", "shared", "tmem_size", "global_scratch_size")
        if meta.get(k) is not None
    }
    src = payload.get("python_source")
    options = {k: v for k, v in meta.items() if k not in NOT_OPTIONS | TRACER_METADATA}
    return Trajectory(
        kernel=_kernel(name, src),
        target=target,
        specialization=restated.specialization(options),
        snapshots=snapshots,
        artifacts=artifacts,
        resources=resources,
        times=times,
        versions={"irscope": __version__, **({"triton": meta["triton_version"]} if "triton_version" in meta else {})},
        created=str(rec.data.get("timestamp", "")),
        origin={
            "format": "tritonparse",
            "trace": str(trace),
            "line": rec.line,
            "pid": rec.data.get("pid", 0),
            "timestamp": rec.data.get("timestamp", ""),
            "metadata": meta,
            **({"python_source": {k: v for k, v in src.items() if k != "code"}} if src else {}),
        },
    )


def _times(times: Any) -> dict[str, Any]:
    """Triton's CompileTimes (microseconds) as a trajectory's times (Triton's `llir` is irscope's `llvm` here: the
    trace has no LLVM-dialect stage)."""
    if not isinstance(times, dict) or not isinstance(times.get("lowering_stages"), list):
        return {}
    stage_ms = {
        ("llvm" if str(k) == "llir" else str(k)): v / 1e3
        for k, v in (pair for pair in times["lowering_stages"] if isinstance(pair, list) and len(pair) == 2)
        if isinstance(v, int | float)
    }
    out: dict[str, Any] = {"stage_ms": stage_ms}
    if isinstance(times.get("ir_initialization"), int | float):
        out["frontend_ms"] = times["ir_initialization"] / 1e3
    return out


def _kernel(name: str, src: dict[str, Any] | None) -> KernelInfo:
    """The kernel at its own line numbers: a trace holding the function only gives a file of blank lines and it."""
    if not src:
        return KernelInfo(name, "<unknown>", 0, 0)
    code: str = src["code"]
    start = src.get("start_line", 1)
    full = is_full_file(src)
    source = code if full else "\n" * (start - 1) + code
    lines = source.split("\n")
    begin = src.get("function_start_line", start) if full else start
    first = next(
        (i for i in range(begin, len(lines) + 1) if re.match(rf"\s*def\s+{re.escape(name)}\b", lines[i - 1])), begin
    )
    last = src.get("function_end_line" if full else "end_line", len(lines))
    return KernelInfo(name, str(src.get("file_path", "<unknown>")), first, last, source)


def _restore(
    extra: dict[str, Any], stage_texts: dict[str, str], directory: Path
) -> tuple[Trajectory | None, str | None]:
    """The trajectory `irscope export` put into the record, when it agrees with the record's stages."""
    doc = extra.get("trajectory")
    if extra.get("version") != EXTRA_VERSION:
        return None, f"its layout is version {extra.get('version')!r}, this irscope reads {EXTRA_VERSION}"
    if extra.get("format_version") != FORMAT_VERSION or not isinstance(doc, dict):
        return None, f"trajectory format version {extra.get('format_version')!r}, this irscope reads {FORMAT_VERSION}"
    try:
        validate(doc)
        traj = from_json(doc, directory)  # its texts are set from the record below, not read from files
    except (TrajectoryFormatError, TypeError, KeyError) as e:
        return None, str(e)
    texts, artifacts = extra.get("texts", {}), extra.get("artifacts", {})
    for snap in traj.snapshots:
        text = texts.get(snap.sha1)
        if not isinstance(text, str) or sha1(text) != snap.sha1:
            return None, f"snapshot {snap.index}'s text is missing or damaged"
        snap._text, snap._loader, snap.ir_file = text, None, ""
    for stage, text in stage_texts.items():
        if stage in traj.stages and traj.stage_output(stage).text != text:
            return None, f"its {stage} differs from the record's (the record was edited after export?)"
    for name, art in list(traj.artifacts.items()):
        data = artifacts.get(name, {})
        if "base64" in data:
            art._data = base64.b64decode(data["base64"])
        elif "text" in data:
            art._data = data["text"]
        else:
            return None, f"artifact {name} is missing"
        art._loader, art.file = None, ""
    traj.kernel.source = extra.get("source", "")
    traj.root = None
    return traj, None


__all__ = ["MANIFEST", "STAGE_PASS", "ImportResult", "Imported", "TraceError", "import_trace"]
