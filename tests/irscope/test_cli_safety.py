"""The irscope CLI never loses or mixes a capture and reads damaged ones with a clear error (real compiles, real files).

Each test reproduces a way data was lost or a traceback was printed: two captures into one directory, a capture
killed while replacing an older one, a journal with a damaged line, a newer format version, a deleted IR file.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import irscope
from compiler_index.build import build, resolve_roots
from compiler_index.cli import main as index_main
from irscope.cli import main as cli_main
from irscope.store import JOURNAL, DirectoryWriter, TrajectoryFormatError
from patterns.cli import main as patterns_main

ADD = textwrap.dedent("""
    import triton
    import triton.language as tl


    @triton.jit
    def add_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(y_ptr + i, tl.load(x_ptr + i, mask=m) + 1, mask=m)
""")
ADD_ARGS = ["--arg", "x_ptr=*fp32", "--arg", "y_ptr=*fp32", "--arg", "n=1024", "--constexpr", "BLOCK=256"]
CORPUS = Path(__file__).resolve().parents[1] / "compiler_index" / "corpus"


@pytest.fixture(scope="module")
def add_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("kernels") / "add.py"
    path.write_text(ADD)
    return path


@pytest.fixture(scope="module")
def add_dump(add_file, tmp_path_factory):
    """A complete trajectory of add_one; tests copy it before damaging it."""
    out = tmp_path_factory.mktemp("add") / "dump"
    assert cli_main(["dump", f"{add_file}:add_one", *ADD_ARGS, "--out", str(out)]) == 0
    return out


def copy_of(dump: Path, where: Path) -> Path:
    subprocess.run(["cp", "-r", str(dump), str(where)], check=True)
    return where


def error_line(capsys) -> str:
    """stderr, which must be one error line and no traceback."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return " ".join(err.split())


def test_second_capture_into_a_directory_being_written_fails_clearly(add_file, tmp_path, capsys):
    out = tmp_path / "dump"
    first = DirectoryWriter(out)  # a capture in progress: it holds the directory's lock
    first.write_header({"what": "the first capture's journal"})
    assert cli_main(["dump", f"{add_file}:add_one", *ADD_ARGS, "--out", str(out)]) == 2
    err = error_line(capsys)
    assert f"{out}: another capture (process {os.getpid()}) is writing to it" in err
    assert "another output directory" in err
    assert (out / JOURNAL).read_text() == '{"header": {"what": "the first capture\'s journal"}}\n'  # untouched
    del first  # the first capture ends: its lock is released
    assert cli_main(["dump", f"{add_file}:add_one", *ADD_ARGS, "--out", str(out)]) == 0
    assert irscope.load(out).kernel.name == "add_one"


def test_a_capture_killed_while_replacing_a_trajectory_leaves_the_old_one(add_dump, tmp_path):
    out = copy_of(add_dump, tmp_path / "dump")
    script = textwrap.dedent(f"""
        import irscope
        from irscope.examples import EXAMPLES
        ex = EXAMPLES["matmul"]
        irscope.capture(ex.kernel, target="cuda:90", out_dir={str(out)!r}, kernel_kwargs=ex.args, **ex.options)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ))
    deadline = time.time() + 120
    journals: list[Path] = []
    while time.time() < deadline:
        journals = list(tmp_path.glob(f".dump.new-*/{JOURNAL}"))
        if journals and journals[0].read_text().count('"snapshot"') >= 20:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    old = irscope.load(out)
    assert old.kernel.name == "add_one" and old.complete and old.error is None
    assert all(s.text for s in old.snapshots)
    partial = irscope.load(journals[0].parent)  # the killed capture's own passes are beside it
    assert partial.kernel.name == "matmul_kernel" and not partial.complete and len(partial.snapshots) >= 20


def test_a_finished_capture_replaces_the_old_trajectory_whole(add_dump, tmp_path):
    out = copy_of(add_dump, tmp_path / "dump")
    irscope.capture(
        irscope.examples.EXAMPLES["matmul"].kernel,
        target="cuda:90",
        out_dir=out,
        kernel_kwargs=irscope.examples.EXAMPLES["matmul"].args,
        **irscope.examples.EXAMPLES["matmul"].options,
    )
    traj = irscope.load(out)
    assert traj.kernel.name == "matmul_kernel"
    # only the new capture's files: no IR file of add_one is left among them
    assert {f"ir/{p.name}" for p in (out / "ir").iterdir()} == {s.ir_file for s in traj.snapshots}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [".dump.lock"]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: d.write_text("notes"), "is a file, not a directory"),
        (lambda d: (d.mkdir(), (d / "notes.txt").write_text("mine")), "holds files that are not an irscope trajectory"),
    ],
)
def test_an_output_that_is_not_a_trajectory_is_refused(setup, message, add_file, tmp_path, capsys):
    out = tmp_path / "dump"
    setup(out)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    assert cli_main(["dump", f"{add_file}:add_one", *ADD_ARGS, "--out", str(out)]) == 2
    assert f"{out} {message}" in error_line(capsys)
    assert sorted(p.name for p in tmp_path.rglob("*") if p.name != ".dump.lock") == before


def _journal_of(dump: Path, where: Path) -> Path:
    """`dump` as a capture that died after its last pass left it: its header and records in a journal."""
    doc = json.loads((dump / "trajectory.json").read_text())
    out = copy_of(dump, where)
    (out / "trajectory.json").unlink()
    header = {k: v for k, v in doc.items() if k not in ("snapshots", "artifacts", "error", "complete", "created")}
    lines = [{"header": header}] + [{"snapshot": s} for s in doc["snapshots"]]
    (out / JOURNAL).write_text("".join(json.dumps(line) + "\n" for line in lines))
    return out


def test_a_damaged_journal_line_is_skipped_and_named(add_dump, tmp_path, capsys):
    out = _journal_of(add_dump, tmp_path / "dump")
    lines = (out / JOURNAL).read_text().splitlines(keepends=True)
    total = len(lines) - 1
    lines.insert(10, "garbage from a disk error\n")
    lines.insert(20, '{"snapshot": {"index": "not a record"}}\n')
    lines.append('{"snapshot": {"index": 9')  # the line being written when the process died
    (out / JOURNAL).write_text("".join(lines))
    traj = irscope.load(out)
    assert len(traj.snapshots) == total  # every valid record, the ones after the damage included
    assert not traj.complete
    assert "journal.jsonl line(s) 11, 21, 73 unreadable and skipped" in traj.error.message
    assert cli_main(["ls", str(out)]) == 0
    assert "line(s) 11, 21, 73 unreadable and skipped" in " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("journal", [False, True])
def test_a_newer_format_version_is_refused(journal, add_dump, tmp_path, capsys):
    out = _journal_of(add_dump, tmp_path / "dump") if journal else copy_of(add_dump, tmp_path / "dump")
    path = out / (JOURNAL if journal else "trajectory.json")
    path.write_text(path.read_text().replace('"format_version": 1', '"format_version": 99', 1))
    with pytest.raises(TrajectoryFormatError, match="format version 99, this irscope reads version 1"):
        irscope.load(out)
    assert cli_main(["show", str(out)]) == 2
    assert f"{path}: trajectory format version 99, this irscope reads version 1" in error_line(capsys)


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("corpus") / "index.db"
    build(db, resolve_roots([CORPUS], [CORPUS / "python" / "toytriton"]))
    return db


def _ptx(traj):  # every command but explain reads the PTX
    return next(s for s in traj.snapshots if s.kind == "ptx")


def _coalesce(traj):  # explain reads the MLIR on both sides of the pass it explains
    return next(s for s in traj.snapshots if s.pass_arg == "tritongpu-coalesce")


@pytest.mark.parametrize(
    ("victim", "command"),
    [
        (_ptx, lambda d, db, tmp, snap: (cli_main, ["show", d])),
        (_ptx, lambda d, db, tmp, snap: (cli_main, ["query", d, "timeline", "tt.load"])),
        (_ptx, lambda d, db, tmp, snap: (cli_main, ["report", d, "-o", f"{tmp}/r.html"])),
        (_ptx, lambda d, db, tmp, snap: (cli_main, ["diff", d, d])),
        (_coalesce, lambda d, db, tmp, snap: (index_main, ["explain", d, "--pass", snap, "--db", str(db)])),
        (_ptx, lambda d, db, tmp, snap: (patterns_main, ["match", "--trajectory", d])),
    ],
    ids=["show", "query", "report", "diff", "explain", "patterns-match"],
)
def test_a_deleted_ir_file_is_named(victim, command, add_dump, corpus_db, tmp_path, capsys):
    out = copy_of(add_dump, tmp_path / "dump")
    snap = victim(irscope.load(out))
    (out / snap.ir_file).unlink()
    main, args = command(str(out), corpus_db, tmp_path, str(snap.index))
    assert main(args) == 2
    err = error_line(capsys)
    assert f"{out}: cannot read {snap.ir_file} (No such file or directory)" in err
    assert "capture it again with `irscope dump`" in err


BAD_ASM = textwrap.dedent("""
    import triton
    import triton.language as tl


    @triton.jit
    def add_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        x = tl.load(x_ptr + i, mask=m)
        y = tl.inline_asm_elementwise("bogus.instr.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
        tl.store(y_ptr + i, y, mask=m)
""")


@pytest.fixture(scope="module")
def failed_dump(tmp_path_factory):
    """add_one with an instruction ptxas rejects: every stage up to PTX, no cubin, SASS or resources."""
    where = tmp_path_factory.mktemp("bad")
    (where / "bad.py").write_text(BAD_ASM)
    assert cli_main(["dump", f"{where / 'bad.py'}:add_one", *ADD_ARGS, "--out", str(where / "dump")]) == 1
    return where / "dump"


def test_diff_with_a_partial_trajectory_says_so_and_leaves_out_unfinished_stages(add_dump, failed_dump, capsys):
    capsys.readouterr()
    assert cli_main(["diff", str(add_dump), str(failed_dump), "--all"]) == 0
    out, err = capsys.readouterr()
    err = " ".join(err.split())
    assert f"warning: b ({failed_dump}) is a partial trajectory: its compile failed in cubin" in err
    assert "not compared: res, sass (not finished in both" in err
    # the complete dump's 10 registers against the failed one's none would read as a 10-register saving
    assert "res.registers" not in out and "sass." not in out
    assert "ptx." in out  # the stages both finished are compared

    assert cli_main(["diff", str(add_dump), str(failed_dump), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["a"]["partial"] is None and doc["b"]["partial"].startswith("b is a partial trajectory")
    assert doc["b"]["error"]["stage"] == "cubin"
    assert doc["not_compared"] == ["res", "sass"]
    assert doc["counters"] and not any(c["name"].startswith(("res.", "sass.")) for c in doc["counters"])


def test_show_and_query_print_json(add_dump, capsys):
    capsys.readouterr()
    assert cli_main(["show", str(add_dump), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kernel"] == "add_one" and doc["complete"] and doc["error"] is None
    assert doc["resources"]["registers"] == 10  # ptxas -v of this kernel for sm_90a (the dump's summary line)
    assert any(e["pass_arg"] == "tritongpu-coalesce" for e in doc["changed_passes"])

    assert cli_main(["query", str(add_dump), "timeline", "tt.load", "--json"]) == 0
    timeline = json.loads(capsys.readouterr().out)
    assert timeline[0] == {"snapshot": 0, "label": "ttir[-1] <input>", "value": 1}  # one tl.load in the source

    assert cli_main(["query", str(add_dump), "line", "10", "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["source"] == "tl.store(y_ptr + i, tl.load(x_ptr + i, mask=m) + 1, mask=m)"
    assert line["ops"]["ttir"]["tt.load"] == 1 and line["ops"]["ttir"]["tt.store"] == 1

    assert cli_main(["query", str(add_dump), "introduced-by", "no.such_op", "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == []


def test_report_into_a_missing_folder_creates_it_and_a_folder_as_output_is_refused(add_dump, tmp_path, capsys):
    out = tmp_path / "reports" / "2024" / "add.md"
    assert cli_main(["report", str(add_dump), "-o", str(out)]) == 0
    assert out.read_text().startswith("# add_one")
    capsys.readouterr()
    assert cli_main(["report", str(add_dump), "-o", str(tmp_path)]) == 2
    assert f"-o {tmp_path} is a directory: give the report's file name, e.g. {tmp_path}/report.html" in error_line(
        capsys
    )


def test_a_kernel_file_with_a_non_ascii_path_compiles_through_ptxas(tmp_path, capsys):
    # ptxas rejected "// kérnel.py:9:0", the comment LLVM writes after each .loc ("Unexpected non-ASCII character")
    kernel = tmp_path / "ünïcode" / "kérnel.py"
    kernel.parent.mkdir()
    kernel.write_text(ADD)
    out = tmp_path / "dump"
    assert cli_main(["dump", f"{kernel}:add_one", *ADD_ARGS, "--out", str(out)]) == 0
    traj = irscope.load(out)
    assert traj.error is None and traj.resources["registers"] == 10  # as add_one from an ASCII path
    assert "// kérnel.py:" in traj.stage_output("ptx").text  # the snapshot is LLVM's text, unescaped
    assert "sass" in traj.artifacts
