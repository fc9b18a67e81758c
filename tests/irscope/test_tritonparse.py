"""tritonparse traces in and out (irscope export / import), against tritonparse itself.

The traces are tritonparse's own: its structured logging records real compiles of the bundled kernels on this CPU
(docs/examples/tritonparse/trace_kernels.py, the CPU stand-in driver). Exports are read back by tritonparse's own
validator and parser. Damaged traces are real traces cut or edited the ways files get damaged.
"""

from __future__ import annotations

import gzip
import json
import shlex
import shutil
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest
from tritonparse.parse.trace_processor import parse_single_file
from tritonparse.validation.json_validator import validate_trace_file

import irscope
from irscope import hazards
from irscope.capture.api import kernel_info
from irscope.cli import main as cli_main
from irscope.examples import EXAMPLES
from irscope.interop.tritonparse import TraceError, export, import_trace
from irscope.interop.tritonparse.exporter import compilation_record
from irscope.interop.tritonparse.importer import MANIFEST, STAGE_PASS
from irscope.store import OutputDirError, validate
from ladder.cli import main as ladder_main
from mcp_server.store import Loaded
from mcp_server.trajectories import query as mcp_query
from mcp_server.trajectories import summary as mcp_summary
from tests.irscope.conftest import capture_example
from tests.irscope.test_capture_failures import FAILING

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "examples" / "tritonparse" / "trace_kernels.py"
KERNELS = Path(irscope.examples.kernels.__file__)
# tritonparse's stage names → irscope's stages
STAGES = {"ttir": "ttir", "ttgir": "ttgir", "llir": "llvm", "ptx": "ptx"}


def traced(out: Path, *options: str) -> Path:
    """The trace tritonparse writes for the top-2 kernels compiled on this CPU."""
    subprocess.run([sys.executable, str(SCRIPT), str(out), *options], check=True, capture_output=True, cwd=ROOT)
    (trace,) = out.iterdir()
    return trace


def lines(trace: Path) -> list[dict]:
    opener = gzip.open if trace.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(trace, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    """Function-only source (tritonparse's default), plain NDJSON."""
    return traced(tmp_path_factory.mktemp("tp-trace"))


@pytest.fixture(scope="module")
def imported(trace, tmp_path_factory):
    out = tmp_path_factory.mktemp("tp-import") / "imp"
    return import_trace(trace, out), out


@pytest.fixture(scope="module")
def argmax_dump(tmp_path_factory):
    """A per-pass capture with its SASS, as `irscope dump` writes it."""
    out = tmp_path_factory.mktemp("argmax") / "dump"
    traj = capture_example("top2_argmax", out_dir=out)
    assert traj.artifacts["sass"].data  # made now if the background run has not finished
    return irscope.load(out)


# -- import ---------------------------------------------------------------------------------------------------------
def test_tritonparse_trace_imports_stage_by_stage(trace, imported):
    result, out = imported
    records = lines(trace)
    assert [k.kernel for k in result.kernels] == ["moe_group_top2_argmax", "moe_group_top2_value"]
    for k, rec in zip(result.kernels, records):
        traj = irscope.load(k.directory)
        validate(json.loads((k.directory / "trajectory.json").read_text()))
        assert not k.per_pass and [s.pass_arg for s in traj.snapshots] == [STAGE_PASS] * 4
        contents = rec["payload"]["file_content"]
        for tp_stage, stage in STAGES.items():  # byte for byte what the trace holds
            assert traj.stage_output(stage).text == contents[f"{k.kernel}.{tp_stage}"]
        assert str(traj.target) == "cuda:90" and traj.origin["line"] == k.line
        assert traj.origin["metadata"]["hash"] == rec["payload"]["metadata"]["hash"]
        # the function at its own lines of the file, as the IR's locations name them
        info = kernel_info(EXAMPLES["top2_argmax" if "argmax" in k.kernel else "top2_value"].kernel)
        assert (traj.kernel.source_file, traj.kernel.first_line, traj.kernel.last_line) == (
            info.source_file,
            info.first_line,
            info.last_line,
        )
        source = traj.kernel.source.splitlines()
        assert (
            source[info.first_line - 1 : info.last_line]
            == info.source.splitlines()[info.first_line - 1 : info.last_line]
        )
        assert traj.specialization.signature == {
            "scores_ptr": "*fp32",
            "out_ptr": "*fp32",
            "n_groups": "i32",
            "group_size": "i32",
            "BLOCK": "constexpr",
        }
        assert traj.specialization.attrs["group_size"] == [["tt.divisibility", 16]]
        assert traj.specialization.attrs["n_groups"] == []  # 8 is not a multiple of 16
        assert traj.specialization.constexprs == {"BLOCK": 128}
    manifest = json.loads((out / MANIFEST).read_text())
    assert [k["directory"] for k in manifest["kernels"]] == ["000-moe_group_top2_argmax", "001-moe_group_top2_value"]


def test_imported_trace_diagnoses(imported):
    """Hazards (the ladder's L3 evidence) on the stage-level trajectories: the index-producing reduction of the
    argmax kernel on its lines, none in the value-only rewrite."""
    result, _ = imported
    argmax, value = (hazards.find(irscope.load(k.directory)) for k in result.kernels)
    index = [h for h in argmax.hazards if h.symptom == "index-reduction-sync"]
    assert index and 38 in index[0].lines
    assert not [h for h in value.hazards + value.minor if h.symptom == "index-reduction-sync"]


def test_imported_trace_through_the_cli_and_mcp_tools(imported, tmp_path, capsys):
    result, _ = imported
    a, b = (str(k.directory) for k in result.kernels)
    assert cli_main(["show", a]) == 0
    assert "sync.shuffle" in capsys.readouterr().out
    assert cli_main(["query", a, "line", "38", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "i1 = tl.argmax(x, axis=0)" and doc["ops"]["ttgir"]["tt.reduce"] == 1
    assert cli_main(["diff", a, b, "--json"]) == 0
    diff = json.loads(capsys.readouterr().out)
    assert any(c["name"] == "ttgir.compute.reduce_index" and c["delta"] == -1 for c in diff["counters"])
    assert cli_main(["report", a, "-o", str(tmp_path / "r.html")]) == 0 and (tmp_path / "r.html").stat().st_size
    loaded = Loaded("imported", Path(a), irscope.load(a), threading.RLock())
    s = mcp_summary(loaded, 0, 20)
    assert [st.stage for st in s.stages] == ["ttir", "ttgir", "llvm", "ptx"]
    assert any(line["line"] == 38 for line in s.hot_lines)
    q = mcp_query(loaded, "line", "38", 0, 20)
    assert q.context["source"] == "i1 = tl.argmax(x, axis=0)"


def test_recapture_is_the_traced_compile_pass_by_pass(trace, tmp_path):
    result = import_trace(trace, tmp_path / "imp", recapture=True)
    for k in result.kernels:
        assert k.recaptured == tmp_path / "imp" / f"{k.directory.name}.passes"
        assert k.recapture_note == "identical to the trace's: ttir, ttgir, llir, ptx"
        passes = irscope.load(k.recaptured)
        staged = irscope.load(k.directory)
        assert len(list(passes.passes())) > 60 and passes.find("tritongpu-coalesce").pass_name == "TritonGPUCoalesce"
        for stage in STAGES.values():
            assert passes.stage_output(stage).text == staged.stage_output(stage).text
    # the command it states is the one it ran: `irscope dump` with it gives the same compile
    argv = shlex.split(json.loads((tmp_path / "imp" / MANIFEST).read_text())["kernels"][0]["recapture"])[1:]
    argv[-1] = str(tmp_path / "again")
    assert cli_main(argv) == 0
    assert (
        irscope.load(tmp_path / "again").stage_output("ptx").text
        == irscope.load(result.kernels[0].directory).stage_output("ptx").text
    )


def test_ladder_diagnoses_the_traced_kernel(imported, tmp_path, capsys):
    _, out = imported
    manifest = json.loads((out / MANIFEST).read_text())
    argv = shlex.split(manifest["kernels"][0]["diagnose"])[1:]  # after "ladder"
    assert ladder_main([*argv, "--through", "L3", "--out", str(tmp_path / "diag"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["outcome"] == "actionable" and doc["level"] == "L3"
    assert doc["hypothesis"]["bottleneck"] == "index-reduction-sync"


def test_trace_from_another_machine_recaptures_from_its_own_source(trace, tmp_path):
    """A trace recorded where the kernel lived elsewhere, with tritonparse's function-only source: the import
    writes a runnable file from it (the function at its own lines) and captures that."""
    moved = tmp_path / "moved.ndjson"
    moved.write_text(trace.read_text().replace(str(KERNELS.parent), "/elsewhere/src"))
    result = import_trace(moved, tmp_path / "imp", recapture=True)
    k = result.kernels[0]
    written = tmp_path / "imp" / "sources" / k.directory.name / "kernels.py"
    assert k.recapture[1] == f"{written}:moe_group_top2_argmax"
    assert written.read_text().splitlines()[37] == "    i1 = tl.argmax(x, axis=0)"  # line 38, as in the trace
    assert k.recapture_note.startswith("identical but for the kernel file's path")
    assert "ttir, ttgir, llir, ptx" in k.recapture_note


def test_full_source_gzip_trace(tmp_path):
    """tritonparse's gzip output (a gzip member per record) with the kernel's whole file."""
    trace = traced(tmp_path / "t", "--compression", "gzip", "--full-source", "--kernels", "top2_argmax")
    assert trace.name.endswith(".bin.ndjson") and trace.read_bytes()[:2] == b"\x1f\x8b"
    result = import_trace(trace, tmp_path / "imp")
    traj = irscope.load(result.kernels[0].directory)
    info = kernel_info(EXAMPLES["top2_argmax"].kernel)
    assert traj.kernel.source == KERNELS.read_text()
    assert (traj.kernel.first_line, traj.kernel.last_line) == (info.first_line, info.last_line)


# -- export ---------------------------------------------------------------------------------------------------------
def test_export_opens_in_tritonparse_with_every_stage(argmax_dump, tmp_path):
    out = tmp_path / "argmax.ndjson.gz"
    export([argmax_dump], out)
    report = validate_trace_file(str(out))  # tritonparse's own schema check
    assert report["valid"], report["errors"]
    parse_single_file(str(out), str(tmp_path / "parsed"))  # tritonparse's own parser
    (mapped,) = (tmp_path / "parsed").iterdir()
    records = lines(mapped)
    (comp,) = [r for r in records if r["event_type"] == "compilation"]
    payload = comp["payload"]
    name = "moe_group_top2_argmax"
    for tp_stage, stage in STAGES.items():
        assert payload["file_content"][f"{name}.{tp_stage}"] == argmax_dump.stage_output(stage).text
    assert payload["file_content"][f"{name}.sass"] == argmax_dump.artifacts["sass"].data
    # tritonparse found every stage and mapped each to the kernel's lines
    stages = {"ttir", "ttgir", "llir", "ptx", "sass"}
    assert set(payload["source_mappings"]) == stages | {"python"}
    python = payload["source_mappings"]["python"]
    assert all(any(f"{stage}_lines" in lines for lines in python.values()) for stage in stages)
    # the export's own mappings put the argmax's reduction code, inlined from tl.*, on line 38 at every stage
    (exported,) = lines(out)
    assert {f"{stage}_lines" for stage in stages} <= set(exported["payload"]["source_mappings"]["python"]["38"])
    assert [s["name"] for s in payload["ir_stages"]][:4] == ["ttir", "ttgir", "llir", "ptx"]
    # the viewer names a kernel by its first file; irscope's field survives tritonparse's parser
    assert next(iter(payload["file_path"])) == f"{name}.ttir"
    assert len(payload["irscope"]["trajectory"]["snapshots"]) == len(argmax_dump.snapshots)
    assert any(r["event_type"] == "ir_analysis" for r in records)


def test_exported_source_mappings_agree_with_tritonparse(argmax_dump, tmp_path):
    """Where tritonparse maps a TTIR/TTGIR line to the kernel's file, the export maps it to the same line."""
    export([argmax_dump], tmp_path / "a.ndjson")
    ours = lines(tmp_path / "a.ndjson")[0]["payload"]["source_mappings"]
    parse_single_file(str(tmp_path / "a.ndjson"), str(tmp_path / "parsed"))
    (mapped,) = (tmp_path / "parsed").iterdir()
    theirs = lines(mapped)[0]["payload"]["source_mappings"]
    kernel_file = argmax_dump.kernel.source_file
    for stage in ("ttir", "ttgir"):
        both = [n for n, e in theirs[stage].items() if e["file"] == kernel_file and n in ours[stage]]
        assert len(both) >= 10
        assert all(ours[stage][n]["line"] == theirs[stage][n]["line"] for n in both), stage
    # inlined tl.* code: tritonparse names the helper's line, irscope the kernel line that calls it
    inlined = [n for n, e in theirs["ttgir"].items() if "triton/language" in e["file"] and n in ours["ttgir"]]
    assert inlined and {ours["ttgir"][n]["line"] for n in inlined} <= set(range(31, 42))


def test_round_trip_restores_every_pass(argmax_dump, tmp_path):
    export([argmax_dump], tmp_path / "x.ndjson.gz")
    parse_single_file(str(tmp_path / "x.ndjson.gz"), str(tmp_path / "parsed"))
    (mapped,) = (tmp_path / "parsed").iterdir()
    for trace, out in ((tmp_path / "x.ndjson.gz", tmp_path / "a"), (mapped, tmp_path / "b")):
        result = import_trace(trace, out)
        (k,) = result.kernels
        assert k.per_pass
        back = irscope.load(k.directory)
        assert [(s.label, s.pass_name, s.sha1, s.changed) for s in back.snapshots] == [
            (s.label, s.pass_name, s.sha1, s.changed) for s in argmax_dump.snapshots
        ]
        for s in argmax_dump.snapshots:  # every pass's text, byte for byte, in the same files
            assert (k.directory / s.ir_file).read_bytes() == (argmax_dump.root / s.ir_file).read_bytes()
        for name in ("cubin", "ptxas-log", "sass"):
            assert back.artifacts[name].data == argmax_dump.artifacts[name].data
        original = json.loads((argmax_dump.root / "trajectory.json").read_text())
        again = json.loads((k.directory / "trajectory.json").read_text())
        original["artifacts"]["sass"]["sha1"] = again["artifacts"]["sass"]["sha1"]  # known once the SASS exists
        assert again == original


def test_round_trip_stages_only_and_of_a_tritonparse_trace(trace, imported, argmax_dump, tmp_path):
    export([argmax_dump], tmp_path / "s.ndjson", stages_only=True)
    (k,) = import_trace(tmp_path / "s.ndjson", tmp_path / "s").kernels
    back = irscope.load(k.directory)
    assert not k.per_pass and k.recapture  # a per-pass capture is offered instead
    for stage in STAGES.values():
        assert back.stage_output(stage).text == argmax_dump.stage_output(stage).text
    # tritonparse's trace → import → export: tritonparse's stages and metadata as they were
    result, _ = imported
    export([irscope.load(k.directory) for k in result.kernels], tmp_path / "again.ndjson")
    for before, after in zip(lines(trace), lines(tmp_path / "again.ndjson")):
        b, a = before["payload"], after["payload"]
        assert a["metadata"] == b["metadata"]
        assert a["python_source"] == b["python_source"]
        assert {k: v for k, v in a["file_content"].items() if not k.endswith(".json")} == {
            k: v for k, v in b["file_content"].items() if not k.endswith(".json")
        }


def test_export_cli(argmax_dump, tmp_path, capsys):
    assert cli_main(["export", str(argmax_dump.root), "--format", "tritonparse", "-o", str(tmp_path / "t.ndjson")]) == 0
    assert "stages ttir ttgir llir ptx sass" in capsys.readouterr().out
    assert cli_main(["export", str(argmax_dump.root), "-o", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert cli_main(["export", str(tmp_path / "nothing"), "-o", str(tmp_path / "u.ndjson")]) == 2
    assert "no such directory" in capsys.readouterr().err and not (tmp_path / "u.ndjson").exists()


def test_export_of_a_failed_compile_keeps_its_finished_stages(tmp_path):
    source = tmp_path / "bad.py"
    source.write_text(FAILING)
    args = ["--arg", "x_ptr=*fp32", "--constexpr", "BLOCK=128"]
    assert cli_main(["dump", f"{source}:bad_asm", *args, "--out", str(tmp_path / "asm")]) == 1  # ptxas fails
    failed = irscope.load(tmp_path / "asm")
    record, info = compilation_record(failed)
    assert info.stages == ["ttir", "ttgir", "llir", "ptx"] and "bad_asm.cubin" not in record["payload"]["file_path"]
    assert cli_main(["dump", f"{source}:bad_frontend", *args, "--out", str(tmp_path / "front")]) == 1
    with pytest.raises(ValueError, match="no stage finished"):
        compilation_record(irscope.load(tmp_path / "front"))


# -- bad input --------------------------------------------------------------------------------------------------------
def cli_import(trace: Path, out: Path, capsys) -> tuple[int, str]:
    code = cli_main(["import", str(trace), "--out", str(out)])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Traceback" not in text
    return code, " ".join(captured.err.split())  # unwrapped


def test_cut_off_trace_is_an_error_naming_the_line(trace, tmp_path, capsys):
    data = trace.read_bytes()
    cut = tmp_path / "cut.ndjson"
    cut.write_bytes(data[: len(data) - 5000])  # the process died while writing the second record
    code, err = cli_import(cut, tmp_path / "imp", capsys)
    assert code == 2 and f"{cut}:2: the file ends inside a record" in err and "head -n 1" in err
    assert not (tmp_path / "imp").exists()  # nothing half-imported


def test_damaged_lines_are_errors_naming_the_line(trace, tmp_path, capsys):
    first, second = trace.read_text().splitlines()[:2]
    cases = {
        "garbage": (f"{first}\n{{oops\n{second}\n", ":2: not a JSON record"),
        "array": (f"[1, 2]\n{first}\n", ":1: a JSON list, not a record"),
        "no event": ('{"payload": {}}\n', ":1: a JSON object without an event_type"),
        "no name": (
            json.dumps({"event_type": "compilation", "payload": {"metadata": {"hash": "h"}}}) + "\n",
            ":1: a compilation record without payload.metadata.name",
        ),
        "binary": (first + "\n\udcff\n", ":2: not UTF-8 text"),
    }
    for what, (text, expected) in cases.items():
        bad = tmp_path / f"{what.replace(' ', '-')}.ndjson"
        bad.write_bytes(text.encode("utf-8", "surrogateescape"))
        code, err = cli_import(bad, tmp_path / f"out-{what}", capsys)
        assert code == 2 and f"{bad}{expected}" in err, (what, err)


def test_damaged_gzip_and_other_formats(trace, tmp_path, capsys):
    gz = gzip.compress(trace.read_bytes())
    cut = tmp_path / "cut.ndjson.gz"
    cut.write_bytes(gz[: len(gz) // 2])
    code, err = cli_import(cut, tmp_path / "a", capsys)
    assert code == 2 and "the gzip stream breaks after line" in err and "cut off or damaged" in err
    zstd = tmp_path / "z.bin.ndjson"
    zstd.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 16)
    code, err = cli_import(zstd, tmp_path / "b", capsys)
    assert code == 2 and "zstd-compressed" in err and "TRITON_TRACE_COMPRESSION" in err
    empty = tmp_path / "empty.ndjson"
    empty.write_text("")
    code, err = cli_import(empty, tmp_path / "c", capsys)
    assert code == 2 and "is empty" in err
    launches = tmp_path / "launches.ndjson"
    launches.write_text(json.dumps({"event_type": "launch", "name": "k"}) + "\n")
    code, err = cli_import(launches, tmp_path / "d", capsys)
    assert code == 2 and "no compilation record (records: 1 launch)" in err and "TRITON_CACHE_DIR" in err


def test_newer_tritonparse_fields_load_with_a_note(trace, tmp_path, capsys):
    records = lines(trace)
    records[0]["compile_trace_id"] = 7
    records[0]["payload"]["kernel_signature_v2"] = {"x": 1}
    records.insert(1, {"event_type": "kernel_profile", "pid": 1})
    newer = tmp_path / "newer.ndjson"
    newer.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, err = cli_import(newer, tmp_path / "imp", capsys)
    assert code == 0 and len(list((tmp_path / "imp").glob("00?-*"))) == 2
    assert "compile_trace_id (line 1), payload.kernel_signature_v2 (line 1)" in err
    assert "event types this irscope does not know, ignored: 1 kernel_profile" in err


def test_known_fields_cover_tritonparse_schema():
    """The fields an import knows are those tritonparse's own schema declares (plus irscope's field)."""
    from tritonparse.validation.schema_loader import get_schema, get_supported_event_types

    from irscope.interop.tritonparse.format import OTHER_EVENTS, PAYLOAD_FIELDS, RECORD_FIELDS

    schema = get_schema("compilation")
    assert set(schema["properties"]) == RECORD_FIELDS
    assert set(schema["definitions"]["Payload"]["properties"]) | {"irscope"} == PAYLOAD_FIELDS
    assert set(get_supported_event_types()) - {"compilation"} <= OTHER_EVENTS


def test_edited_export_falls_back_to_the_trace_stages(argmax_dump, tmp_path):
    export([argmax_dump], tmp_path / "x.ndjson")
    (record,) = lines(tmp_path / "x.ndjson")
    key = "moe_group_top2_argmax.ttgir"
    record["payload"]["file_content"][key] += "// edited\n"
    (tmp_path / "y.ndjson").write_text(json.dumps(record) + "\n")
    result = import_trace(tmp_path / "y.ndjson", tmp_path / "imp")
    (k,) = result.kernels
    assert not k.per_pass and "its ttgir differs from the record's" in " ".join(result.notes)
    assert irscope.load(k.directory).stage_output("ttgir").text.endswith("// edited\n")


def test_irscope_field_of_another_layout_falls_back_to_the_trace_stages(argmax_dump, tmp_path):
    export([argmax_dump], tmp_path / "x.ndjson")
    (record,) = lines(tmp_path / "x.ndjson")
    record["payload"]["irscope"]["version"] = 2
    (tmp_path / "y.ndjson").write_text(json.dumps(record) + "\n")
    result = import_trace(tmp_path / "y.ndjson", tmp_path / "imp")
    (k,) = result.kernels
    assert not k.per_pass and "its layout is version 2, this irscope reads 1" in " ".join(result.notes)


def test_import_directory_rules(trace, tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    code, err = cli_import(trace, other, capsys)
    assert code == 2 and "not an earlier import's" in err and (other / "notes.txt").read_text() == "mine"
    out = tmp_path / "imp"
    import_trace(trace, out)
    one = tmp_path / "one.ndjson"
    one.write_text(trace.read_text().splitlines()[1] + "\n")  # the value kernel alone
    result = import_trace(one, out)  # an earlier import's directory: replaced
    # lock files stay (irscope.store); the earlier import's argmax trajectory is gone
    assert [p.name for p in sorted(out.iterdir()) if not p.name.startswith(".")] == [
        "000-moe_group_top2_value",
        MANIFEST,
    ]
    assert irscope.load(result.kernels[0].directory).kernel.name == "moe_group_top2_value"
    with pytest.raises(OutputDirError):
        import_trace(trace, one)  # a file
    with pytest.raises(TraceError, match="is a directory"):
        import_trace(tmp_path, tmp_path / "x")


def test_hundreds_of_kernels_import_in_bounded_memory(trace, tmp_path):
    """Memory holds one record at a time, however many the trace has (gzip-compressed here)."""
    record = lines(trace)[0]
    size = len(json.dumps(record))

    def many(n: int, path: Path) -> Path:
        with gzip.open(path, "wt") as f:
            for i in range(n):  # the same kernel compiled for n distinct keys (as many traced compilations)
                record["payload"]["metadata"]["hash"] = f"{i:064x}"
                f.write(json.dumps(record) + "\n")
        return path

    peaks = {}
    for n in (20, 200):
        trace_n = many(n, tmp_path / f"{n}.ndjson.gz")
        tracemalloc.start()
        result = import_trace(trace_n, tmp_path / f"imp{n}")
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert len(result.kernels) == n
        shutil.rmtree(tmp_path / f"imp{n}")
    # what stays per kernel is its row in the summary, not its record
    assert peaks[200] - peaks[20] < 180 * size * 0.1, (peaks, size)
