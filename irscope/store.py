"""Trajectories on disk: DIR/trajectory.json, one IR file per distinct snapshot text, artifacts, the source.

While a capture runs, a journal (DIR/journal.jsonl) receives each snapshot as soon as its IR file is written,
so a compile that crashes the process still leaves every finished pass readable by `load`.

A capture never loses or mixes data in its output directory: one capture at a time holds a lock on it (the
file .DIR.lock beside it), and a directory that already holds a trajectory is replaced only when the new
capture has finished: the new one is written to a hidden sibling and renamed into place (docs/capture.md).

A capture's IR is bounded in what it costs on disk: identical texts share one file, and once a capture has written
IR_BUDGET_BYTES of IR text (256 MB; a large `tl.sort` unrolled on one warp prints a 50 MB module after each of
its LLVM-dialect passes), every further snapshot is stored gzip-compressed (`.gz`, level 1: about ten times
smaller at hundreds of MB/s) and the capture says so once on stderr. Loading reads both kinds the same way.
Compression rather than diffs between passes: a line diff of two 50 MB texts (difflib) costs minutes, and each
snapshot stays readable on its own.

"Journaled" means the IR file and the journal line were handed to the kernel (`write` returned): a process that
dies after that (segfault, `kill -9`) loses none of it, since the data sits in the kernel's page cache. Passes
are not fsynced one by one (a machine crash, not a process death, is what fsync guards against; 75 of them
cost about 11 ms): `trajectory.json` is fsynced once, before it replaces the journal. Snapshot texts leave
memory once written: only the newest stays (the next stage's input); the others load from their files.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import shutil
import sys
import tempfile
import weakref
from functools import cache
from pathlib import Path
from typing import Any

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
    sha1,
)

SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "trajectory.schema.json"
JOURNAL = "journal.jsonl"
IR_BUDGET_BYTES = 256 << 20  # IR text written as is; beyond it, snapshots are stored compressed
_EXT = {"mlir": ".mlir", "llvm-ir": ".ll", "ptx": ".ptx", "amdgcn": ".s"}
_ART_EXT = {"cubin": ".cubin", "hsaco": ".hsaco", "sass": ".sass", "ptxas-log": ".log"}


class TrajectoryFormatError(ValueError):
    """A trajectory directory that does not hold a readable trajectory."""


class OutputDirError(ValueError):
    """An output directory a capture cannot write to without losing data."""


@cache
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


@cache
def _validator() -> Any:
    import jsonschema  # 35 ms of imports: only reading (and tests) validate, never the capture's write path

    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())  # once: jsonschema.validate() checks the schema itself on every call
    return cls(schema())


_VALID: set[str] = set()  # sha1 of trajectory.json documents this process validated


def validate(doc: dict) -> None:
    import jsonschema

    try:
        _validator().validate(doc)
    except jsonschema.ValidationError as e:
        where = "/".join(map(str, e.absolute_path)) or "(top level)"
        raise TrajectoryFormatError(f"trajectory.json does not match the schema at {where}: {e.message}") from e


class DirectoryWriter(SnapshotListener):
    """Writes IR files and journal lines as snapshots arrive; `finish` writes trajectory.json.

    It holds the output directory's lock until `finish` (or until it is garbage collected or the process ends).
    A new or empty directory is written in place, so a capture that dies leaves its journal there; one that
    holds a trajectory is written beside it and swapped in by `finish`, so a capture that is killed leaves the
    old one intact (and its own journal in the hidden .DIR.new-* sibling; a writer dropped unfinished by a live
    process discards that sibling).
    """

    def __init__(self, root: str | Path, ir_budget: int = IR_BUDGET_BYTES):
        self.target = Path(root)
        self.ir_budget = ir_budget
        self._ir_bytes = 0  # IR text written so far (compressed files count their text)
        self._lock_fd = _lock(self.target)
        try:
            self.root = _writable_dir(self.target)
        except BaseException:
            os.close(self._lock_fd)
            raise
        # an unfinished writer releases the lock when dropped; a staged directory is then discarded
        self._release = weakref.finalize(self, _release, self._lock_fd, self.root if self.staged else None)
        (self.root / "ir").mkdir(parents=True, exist_ok=True)
        (self.root / "artifacts").mkdir(exist_ok=True)
        for stale in ("trajectory.json", JOURNAL):
            (self.root / stale).unlink(missing_ok=True)
        self._files_by_sha: dict[str, str] = {}
        self._journal = open(self.root / JOURNAL, "a")  # noqa: SIM115 - appended to until finish()
        self._last: Snapshot | None = None
        self._where = self.root  # where the files are now: the staged sibling moves to the target on finish

    def _load_text(self, rel: str) -> str:
        return read_ir(self._where / rel)

    @property
    def staged(self) -> bool:
        return self.root != self.target

    def snapshot_added(self, snap: Snapshot) -> None:
        rel = self._files_by_sha.get(snap.sha1)
        if rel is None:  # identical texts share one file
            safe = snap.pass_arg.replace("<", "").replace(">", "").replace("/", "_").replace(",", "+")[:60]
            rel = f"ir/{snap.index:03d}-{snap.stage}-{safe}{_EXT.get(snap.kind, '.txt')}"
            text = snap.text
            if self._ir_bytes + len(text) > self.ir_budget:
                if self._ir_bytes <= self.ir_budget:
                    print(
                        f"irscope: {self.target}: over {self.ir_budget >> 20} MB of IR so far; the remaining "
                        "snapshots are stored gzip-compressed (.gz)",
                        file=sys.stderr,
                    )
                rel += ".gz"
                (self.root / rel).write_bytes(gzip.compress(text.encode(), compresslevel=1))
            else:
                (self.root / rel).write_text(text)
            self._ir_bytes += len(text)
            self._files_by_sha[snap.sha1] = rel
        snap.ir_file = rel
        self._journal_line({"snapshot": snap.to_json()})
        if self._last is not None and self._last._loader is None:  # written: its text reloads from the file
            self._last._text, self._last._loader = None, self._load_text
        self._last = snap

    def artifact_added(self, art: Artifact) -> None:
        rel = f"artifacts/{art.name}{_ART_EXT.get(art.name, '.bin' if art.binary else '.txt')}"
        data = art.data
        if isinstance(data, bytes):
            (self.root / rel).write_bytes(data)
        else:
            (self.root / rel).write_text(data)
        art.file = rel
        art.sha1 = art.sha1 or sha1(data)  # a derived artifact, finished by now
        self._journal_line({"artifact": art.to_json()})

    def _journal_line(self, obj: dict) -> None:
        self._journal.write(json.dumps(obj) + "\n")
        self._journal.flush()  # in the kernel's hands: a killed process no longer loses it

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
        doc = traj.to_json()  # validated against the schema on load and in the tests, not on this hot path
        tmp = self.root / "trajectory.json.tmp"
        with open(tmp, "w") as f:
            f.write(json.dumps(doc, indent=1) + "\n")
            f.flush()
            os.fsync(f.fileno())  # the journal goes next: what replaces it must be on disk first
        os.replace(tmp, self.root / "trajectory.json")
        self._journal.close()
        (self.root / JOURNAL).unlink(missing_ok=True)
        if self.staged:
            _swap(self.root, self.target)
        self._where = self.target
        self._release.detach()
        os.close(self._lock_fd)
        traj.root = self.target
        return self.target / "trajectory.json"


def lock_file(target: Path) -> Path:
    """The lock of output directory `target`: beside it, not in it, since the directory itself is replaced when a
    new capture finishes."""
    return target.absolute().parent / f".{target.absolute().name}.lock"


def _lock(target: Path) -> int:
    """An exclusive lock on `target`, held through the returned descriptor; a clear error if another holds it."""
    if target.exists() and not target.is_dir():
        raise OutputDirError(f"{target} is a file, not a directory: give a new directory (or a trajectory's)")
    path = lock_file(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise OutputDirError(
            f"{target}: another capture (process {holder}) is writing to it; wait for it to finish or give "
            f"another output directory"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def _writable_dir(target: Path) -> Path:
    """Where the capture writes: `target` itself when new or empty, else a hidden sibling swapped in later."""
    if not target.exists() or not any(target.iterdir()):
        target.mkdir(parents=True, exist_ok=True)
        return target
    if not ((target / "trajectory.json").exists() or (target / JOURNAL).exists()):
        raise OutputDirError(
            f"{target} holds files that are not an irscope trajectory; give a new or empty directory (a "
            f"trajectory's directory is replaced when the new capture finishes)"
        )
    name = target.absolute().name
    return Path(tempfile.mkdtemp(prefix=f".{name}.new-", dir=target.absolute().parent))


def _swap(staged: Path, target: Path) -> None:
    old = Path(tempfile.mkdtemp(prefix=f".{target.absolute().name}.old-", dir=target.absolute().parent))
    os.replace(target, old)  # an empty directory is replaced atomically
    try:
        os.replace(staged, target)
    except OSError:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _release(fd: int, staged: Path | None) -> None:
    if staged is not None:
        shutil.rmtree(staged, ignore_errors=True)
    os.close(fd)


def read_ir(path: Path) -> str:
    """A snapshot's IR file, stored as text or (past the capture's IR budget) gzip-compressed."""
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def save(traj: Trajectory, root: str | Path, ir_budget: int = IR_BUDGET_BYTES) -> Path:
    """Write a trajectory captured in memory to `root`."""
    writer = DirectoryWriter(root, ir_budget)
    for snap in traj.snapshots:
        snap.ir_file = ""
    for art in traj.artifacts.values():
        art.file = ""
    return writer.finish(traj)


def _loaders(root: Path) -> tuple[Any, Any]:
    def read(rel: str, binary: bool) -> str | bytes:
        try:
            return (root / rel).read_bytes() if binary else read_ir(root / rel)
        except OSError as e:
            raise TrajectoryFormatError(
                f"{root}: cannot read {rel} ({e.strerror}), a file of this trajectory; capture it again with "
                f"`irscope dump` (or restore the directory)"
            ) from e

    def load_text(rel: str) -> str:
        return str(read(rel, False))

    return load_text, read


def _check_version(doc: dict, where: Path) -> None:
    if doc.get("format_version") != FORMAT_VERSION:
        raise TrajectoryFormatError(
            f"{where}: trajectory format version {doc.get('format_version')!r}, this irscope reads version "
            f"{FORMAT_VERSION}; capture it again with this irscope or read it with the irscope that wrote it"
        )


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
    raw = doc_path.read_bytes()
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as e:
        raise TrajectoryFormatError(f"{doc_path}: not valid JSON ({e})") from e
    _check_version(doc, doc_path)
    digest = sha1(raw)
    if digest not in _VALID:  # a process that loads the same document again (a ladder step's queries) checks it once
        validate(doc)
        _VALID.add(digest)
    return from_json(doc, root)


def _artifact_loader(root: Path, art: dict, artifacts: dict) -> Any:
    source = artifacts.get(art.get("derived_from") or "")
    if source is None:
        return _loaders(root)[1]
    from irscope.backends import derive_artifact  # the backends import the capture, which imports this module

    return lambda rel, _binary: derive_artifact(art["name"], root / source["file"], root / rel)


def from_json(doc: dict, root: Path) -> Trajectory:
    load_text = _loaders(root)[0]
    k = doc["kernel"]
    src_file = root / "source" / Path(k["source_file"]).name
    kernel = KernelInfo(**k, source=src_file.read_text() if src_file.exists() else "")
    err = doc.get("error")
    return Trajectory(
        kernel=kernel,
        target=Target(**doc["target"]),
        specialization=Specialization(**doc["specialization"]),
        snapshots=[Snapshot.from_json(s, load_text) for s in doc["snapshots"]],
        artifacts={
            n: Artifact(**a, _loader=_artifact_loader(root, a, doc["artifacts"])) for n, a in doc["artifacts"].items()
        },
        resources=doc.get("resources", {}),
        times=doc.get("times", {}),
        versions=doc.get("versions", {}),
        error=CompileFailure(**err) if err else None,
        created=doc.get("created", ""),
        complete=doc.get("complete", True),
        derivation=doc.get("derivation"),
        origin=doc.get("origin"),
        root=root,
    )


def _record_schemas() -> dict[str, dict]:
    props = schema()["properties"]
    return {"snapshot": props["snapshots"]["items"], "artifact": props["artifacts"]["additionalProperties"]}


def _journal_record(line: str) -> tuple[str, dict] | None:
    """(kind, record) of one journal line, None when the line is not one."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or len(obj) != 1:
        return None
    kind, record = next(iter(obj.items()))
    if kind == "header":
        return (kind, record) if isinstance(record, dict) else None
    import jsonschema  # reading a journal (a dead capture) only: not on the capture's import path

    rule = _record_schemas().get(kind)
    if rule is None or not jsonschema.Draft202012Validator(rule).is_valid(record):
        return None
    return kind, record


def _load_journal(root: Path) -> Trajectory:
    """The trajectory of a capture that died. Every valid record is kept; unreadable lines (the one being written
    when the process died, or damage) are skipped and named in the trajectory's error message."""
    path = root / JOURNAL
    header: dict[str, Any] | None = None
    snaps: list[dict] = []
    arts: dict[str, dict] = {}
    skipped: list[int] = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        rec = _journal_record(line)
        if rec is None:
            skipped.append(number)
        elif rec[0] == "header":
            header = rec[1]
            _check_version(header, path)
        elif rec[0] == "snapshot":
            snaps.append(rec[1])
        else:
            arts[rec[1]["name"]] = rec[1]
    if header is None:
        raise TrajectoryFormatError(
            f"{path}: no header line: the capture died before it recorded what it was compiling; capture again"
        )
    message = "the capturing process ended before the compile finished (crash or kill)"
    if skipped:
        message += f"; {JOURNAL} line(s) {', '.join(map(str, skipped))} unreadable and skipped"
    doc = {
        **header,
        "snapshots": snaps,
        "artifacts": arts,
        "complete": False,
        "error": {"stage": snaps[-1]["stage"] if snaps else None, "pass_arg": None, "message": message},
    }
    try:
        validate(doc)
    except TrajectoryFormatError as e:
        raise TrajectoryFormatError(f"{path}: the journal's header is not a trajectory's: {e}") from e
    return from_json(doc, root)
