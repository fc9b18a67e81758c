"""Trajectories on disk: DIR/trajectory.json, one IR file per distinct snapshot text, artifacts, the source.

While a capture runs, a journal (DIR/journal.jsonl) receives each snapshot as soon as its IR file is written,
so a compile that crashes the process still leaves every finished pass readable by `load`.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from irscope.capture.builder import SnapshotListener
from irscope.targets import Target
from irscope.trajectory import (
    FORMAT_VERSION,
    Artifact,
    CompileFailure,
    KernelInfo,
    Snapshot,
    Specialization,
    Trajectory,
)

SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "trajectory.schema.json"
JOURNAL = "journal.jsonl"
_EXT = {"mlir": ".mlir", "llvm-ir": ".ll", "ptx": ".ptx", "amdgcn": ".s"}
_ART_EXT = {"cubin": ".cubin", "hsaco": ".hsaco", "sass": ".sass", "ptxas-log": ".log"}


class TrajectoryFormatError(ValueError):
    """A trajectory directory that does not hold a readable trajectory."""


@cache
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def validate(doc: dict) -> None:
    try:
        jsonschema.validate(doc, schema())
    except jsonschema.ValidationError as e:
        where = "/".join(map(str, e.absolute_path)) or "(top level)"
        raise TrajectoryFormatError(f"trajectory.json does not match the schema at {where}: {e.message}") from e


class DirectoryWriter(SnapshotListener):
    """Writes IR files and journal lines as snapshots arrive; `finish` writes trajectory.json."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        (self.root / "ir").mkdir(parents=True, exist_ok=True)
        (self.root / "artifacts").mkdir(exist_ok=True)
        for stale in ("trajectory.json", JOURNAL):
            (self.root / stale).unlink(missing_ok=True)
        self._files_by_sha: dict[str, str] = {}
        self._journal = open(self.root / JOURNAL, "a")  # noqa: SIM115 - appended to until finish()

    def snapshot_added(self, snap: Snapshot) -> None:
        rel = self._files_by_sha.get(snap.sha1)
        if rel is None:  # identical texts share one file
            safe = snap.pass_arg.replace("<", "").replace(">", "").replace("/", "_").replace(",", "+")[:60]
            rel = f"ir/{snap.index:03d}-{snap.stage}-{safe}{_EXT.get(snap.kind, '.txt')}"
            (self.root / rel).write_text(snap.text)
            self._files_by_sha[snap.sha1] = rel
        snap.ir_file = rel
        self._journal_line({"snapshot": snap.to_json()})

    def artifact_added(self, art: Artifact) -> None:
        rel = f"artifacts/{art.name}{_ART_EXT.get(art.name, '.bin' if art.binary else '.txt')}"
        data = art.data
        if isinstance(data, bytes):
            (self.root / rel).write_bytes(data)
        else:
            (self.root / rel).write_text(data)
        art.file = rel
        self._journal_line({"artifact": art.to_json()})

    def _journal_line(self, obj: dict) -> None:
        self._journal.write(json.dumps(obj) + "\n")
        self._journal.flush()
        os.fsync(self._journal.fileno())

    def write_header(self, header: dict) -> None:
        self._journal_line({"header": header})

    def finish(self, traj: Trajectory) -> Path:
        for snap in traj.snapshots:
            if not snap.ir_file:
                self.snapshot_added(snap)
        for art in traj.artifacts.values():
            if not art.file:
                self.artifact_added(art)
        if traj.kernel.source:
            src = self.root / "source" / Path(traj.kernel.source_file).name
            src.parent.mkdir(exist_ok=True)
            src.write_text(traj.kernel.source)
        doc = traj.to_json()
        validate(doc)
        tmp = self.root / "trajectory.json.tmp"
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
        os.replace(tmp, self.root / "trajectory.json")
        self._journal.close()
        (self.root / JOURNAL).unlink(missing_ok=True)
        traj.root = self.root
        return self.root / "trajectory.json"


def save(traj: Trajectory, root: str | Path) -> Path:
    """Write a trajectory captured in memory to `root`."""
    writer = DirectoryWriter(root)
    for snap in traj.snapshots:
        snap.ir_file = ""
    for art in traj.artifacts.values():
        art.file = ""
    return writer.finish(traj)


def _loaders(root: Path) -> tuple[Any, Any]:
    def load_text(rel: str) -> str:
        return (root / rel).read_text()

    def load_artifact(rel: str, binary: bool) -> str | bytes:
        return (root / rel).read_bytes() if binary else (root / rel).read_text()

    return load_text, load_artifact


def load(root: str | Path) -> Trajectory:
    """Read a trajectory directory (or one whose capture died: then from its journal, `complete=False`)."""
    root = Path(root)
    if not root.exists():
        raise TrajectoryFormatError(f"{root}: no such directory; pass the --out directory of `irscope dump`")
    doc_path = root / "trajectory.json"
    if not doc_path.exists():
        if (root / JOURNAL).exists():
            return _load_journal(root)
        raise TrajectoryFormatError(f"{root}: no trajectory.json (is this an `irscope dump` output directory?)")
    try:
        doc = json.loads(doc_path.read_text())
    except json.JSONDecodeError as e:
        raise TrajectoryFormatError(f"{doc_path}: not valid JSON ({e})") from e
    if doc.get("format_version") != FORMAT_VERSION:
        raise TrajectoryFormatError(
            f"{doc_path}: format version {doc.get('format_version')!r}, this irscope reads {FORMAT_VERSION}"
        )
    validate(doc)
    return from_json(doc, root)


def from_json(doc: dict, root: Path) -> Trajectory:
    load_text, load_artifact = _loaders(root)
    k = doc["kernel"]
    src_file = root / "source" / Path(k["source_file"]).name
    kernel = KernelInfo(**k, source=src_file.read_text() if src_file.exists() else "")
    err = doc.get("error")
    return Trajectory(
        kernel=kernel,
        target=Target(**doc["target"]),
        specialization=Specialization(**doc["specialization"]),
        snapshots=[Snapshot.from_json(s, load_text) for s in doc["snapshots"]],
        artifacts={n: Artifact(**a, _loader=load_artifact) for n, a in doc["artifacts"].items()},
        resources=doc.get("resources", {}),
        times=doc.get("times", {}),
        versions=doc.get("versions", {}),
        error=CompileFailure(**err) if err else None,
        created=doc.get("created", ""),
        complete=doc.get("complete", True),
        derivation=doc.get("derivation"),
        root=root,
    )


def _load_journal(root: Path) -> Trajectory:
    header: dict[str, Any] | None = None
    snaps: list[dict] = []
    arts: dict[str, dict] = {}
    for line in (root / JOURNAL).read_text().splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            break  # the line being written when the process died
        if "header" in obj:
            header = obj["header"]
        elif "snapshot" in obj:
            snaps.append(obj["snapshot"])
        elif "artifact" in obj:
            arts[obj["artifact"]["name"]] = obj["artifact"]
    if header is None:
        raise TrajectoryFormatError(f"{root}: the capture died before it recorded what it was compiling")
    doc = {
        **header,
        "snapshots": snaps,
        "artifacts": arts,
        "complete": False,
        "error": {
            "stage": snaps[-1]["stage"] if snaps else None,
            "pass_arg": None,
            "message": "the capturing process ended before the compile finished (crash or kill)",
        },
    }
    return from_json(doc, root)
