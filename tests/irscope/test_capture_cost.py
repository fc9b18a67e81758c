"""What keeps a capture cheap, checked on real compiles: no torch import, Triton's own specialization rules,
SASS made beside the capture (background or on first use), texts out of memory once on disk, and the files
still matching the schema that is no longer checked on the write path."""

import json
import shutil
import subprocess
import sys
import textwrap
from collections import namedtuple
from pathlib import Path

import pytest
from triton._C.libtriton import native_specialize_impl
from triton.backends.compiler import GPUTarget
from triton.compiler import make_backend

import irscope
from irscope.capture.specialize import TensorSpec, specialize_arg
from irscope.examples import EXAMPLES
from irscope.store import validate

from .conftest import capture_example

Pair = namedtuple("Pair", "a b")

VALUES = [
    0, 1, 2, 16, 17, -16, -1, 2**31 - 16, 2**31, -(2**31), -(2**31) - 1, 2**40, 2**63 + 16, 2**64 - 1,
    0.5, 1.0, True, False, None, (), (1, 16, 3.0), Pair(16, 5), (TensorSpec("fp16"), 32),
    TensorSpec("fp16"), TensorSpec("fp32", align=4), TensorSpec("bf16", (8, 8), align=8), TensorSpec("i8"),
]  # fmt: skip


@pytest.mark.parametrize("target", [GPUTarget("cuda", 90, 32), GPUTarget("hip", "gfx942", 64)])
def test_python_specialization_equals_the_native_one(target):
    """Every value irscope binds specializes as Triton's native_specialize_impl does, for every flag mix
    (cuda: native tensor specialization; hip: the backend's get_tensor_specialization)."""
    backend = make_backend(target)
    for value in VALUES:
        for is_const in (False, True):
            for specialize in (False, True):
                for align in (False, True):
                    args = (backend, value, is_const, specialize, align)
                    assert specialize_arg(*args) == native_specialize_impl(*args), (value, is_const, specialize, align)
    with pytest.raises(OverflowError):
        specialize_arg(backend, 2**64, False, True, True)


def test_capture_never_imports_torch(tmp_path):
    """A capture from specs (what the CLI gives) leaves torch unimported: it costs a second a compile never pays."""
    script = textwrap.dedent(f"""
        import sys
        import irscope
        from irscope.examples import EXAMPLES
        ex = EXAMPLES["softmax"]
        t = irscope.capture(ex.kernel, target="cuda:90", out_dir={str(tmp_path)!r}, kernel_kwargs=ex.args, **ex.options)
        assert "SHFL" in t.artifacts["sass"].data
        print("torch" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_sass_is_derived_beside_the_capture_and_on_demand(tmp_path):
    """The SASS is listed as derived from the cubin; it lands in the directory without the capture waiting for
    it, and a directory whose SASS file is missing makes it again on first use, identical."""
    traj = capture_example("softmax", out_dir=tmp_path)
    doc = json.loads((tmp_path / "trajectory.json").read_text())
    validate(doc)
    assert doc["artifacts"]["sass"] == {
        "name": "sass",
        "file": "artifacts/sass.sass",
        "binary": False,
        "sha1": "",
        "derived_from": "cubin",
    }
    sass = traj.artifacts["sass"].data  # waits for the background run
    assert "SHFL.BFLY" in sass and '//## File ".nv_debug_ptx_txt"' in sass
    assert (tmp_path / "artifacts" / "sass.sass").read_text() == sass
    (tmp_path / "artifacts" / "sass.sass").unlink()
    assert irscope.load(tmp_path).artifacts["sass"].data == sass
    assert (tmp_path / "artifacts" / "sass.sass").exists()


def test_sass_of_an_in_memory_capture_and_of_a_save(tmp_path):
    traj = capture_example("add")
    assert "LDG.E.128" in traj.artifacts["sass"].data
    irscope.save(traj, tmp_path)
    doc = json.loads((tmp_path / "trajectory.json").read_text())
    validate(doc)
    assert len(doc["artifacts"]["sass"]["sha1"]) == 40  # written with its data: the digest is known
    assert irscope.load(tmp_path).artifacts["sass"].data == traj.artifacts["sass"].data


def test_written_texts_leave_memory_and_reload_identically(tmp_path):
    """With out_dir only the newest snapshot text stays in memory; the rest read back byte for byte."""
    traj = capture_example("top2_argmax", out_dir=tmp_path)
    held = [s.index for s in traj.snapshots if s._text is not None]
    assert held == [traj.snapshots[-1].index]
    plain = capture_example("top2_argmax")
    assert [s.text for s in traj.snapshots] == [s.text for s in plain.snapshots]
    validate(json.loads((Path(tmp_path) / "trajectory.json").read_text()))


def test_op_counts_are_kept_beside_the_trajectory(tmp_path):
    """Counted once, read back after: equal to counting the text, keyed by its sha1; where the cache cannot be
    written (here a file stands where its directory would), the counts still come, uncached."""
    from irscope.opcounts import CACHE_FILE, snapshot_op_counts
    from irscope.parse import op_counts

    capture_example("softmax", out_dir=tmp_path)
    traj = irscope.load(tmp_path)
    mlir = [s for s in traj.snapshots if s.kind == "mlir"]
    fresh = [op_counts(s.text) for s in mlir]
    assert snapshot_op_counts(traj, mlir) == fresh
    cached = json.loads((tmp_path / CACHE_FILE).read_text())
    assert set(cached) == {s.sha1 for s in mlir}
    assert snapshot_op_counts(irscope.load(tmp_path), mlir) == fresh  # from the file now
    shutil.rmtree(tmp_path / "cache")
    (tmp_path / "cache").write_text("not a directory")
    assert snapshot_op_counts(irscope.load(tmp_path), mlir[:3]) == fresh[:3]
    assert (tmp_path / "cache").read_text() == "not a directory"


def test_load_checks_the_schema_that_writing_skips(tmp_path):
    """Writing does not validate; loading does, once per process and content: a document broken after the
    capture is refused every time it is loaded, the intact one loads."""
    from irscope.store import TrajectoryFormatError

    ex = EXAMPLES["add"]
    irscope.capture(
        ex.kernel, target="cuda:90", out_dir=tmp_path, disassemble=False, kernel_kwargs=ex.args, **ex.options
    )
    doc_path = tmp_path / "trajectory.json"
    intact = doc_path.read_text()
    assert irscope.load(tmp_path).kernel.name == "add_kernel"
    doc = json.loads(intact)
    doc["snapshots"][3]["sha1"] = "not-a-digest"
    doc_path.write_text(json.dumps(doc))
    for _ in range(2):
        with pytest.raises(TrajectoryFormatError, match="snapshots/3/sha1"):
            irscope.load(tmp_path)
    doc_path.write_text(intact)
    assert irscope.load(tmp_path).kernel.name == "add_kernel"


def test_a_capture_over_an_old_one_keeps_its_sass_and_texts(tmp_path):
    """Over an existing trajectory the capture is written beside it and swapped in on finish: the SASS starts
    on the final directory, and texts dropped from memory reload from there."""
    first = capture_example("softmax", out_dir=tmp_path)
    assert "SHFL" in first.artifacts["sass"].data
    second = capture_example("add", out_dir=tmp_path)  # written to a hidden sibling, then renamed over
    assert second.root == tmp_path
    assert "LDG.E.128" in second.artifacts["sass"].data
    assert (tmp_path / "artifacts" / "sass.sass").read_text() == second.artifacts["sass"].data
    assert second.snapshots[0].text == capture_example("add").snapshots[0].text  # reloaded from tmp_path
    assert irscope.load(tmp_path).kernel.name == "add_kernel"


def test_ir_past_the_budget_is_stored_compressed_and_reads_back_the_same(tmp_path, capfd):
    """A capture whose IR would take more than its budget on disk (a large sort unrolled on one warp writes about
    50 MB per LLVM-dialect pass) stores every later snapshot gzip-compressed, says so once, and loads the same
    texts; identical texts still share one file."""
    traj = capture_example("top2_argmax")
    sizes = [len(s.text) for s in traj.snapshots]
    budget = sum(sizes[:5])  # the first snapshots as text, the rest compressed
    irscope.save(traj, tmp_path, ir_budget=budget)
    assert capfd.readouterr().err.count("the remaining snapshots are stored gzip-compressed") == 1
    files = sorted(p.name for p in (tmp_path / "ir").iterdir())
    compressed = [f for f in files if f.endswith(".gz")]
    assert compressed and len(compressed) < len(files)
    assert len(files) == len({s.sha1 for s in traj.snapshots})
    written = sum(p.stat().st_size for p in (tmp_path / "ir").iterdir())
    assert written < 0.6 * sum(len(t) for t in {s.sha1: s.text for s in traj.snapshots}.values())
    loaded = irscope.load(tmp_path)
    assert [s.text for s in loaded.snapshots] == [s.text for s in traj.snapshots]
    validate(json.loads((tmp_path / "trajectory.json").read_text()))
