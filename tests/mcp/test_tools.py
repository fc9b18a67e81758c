"""Every tool of `irscope mcp`, driven over stdio by the SDK's real client, on real Triton compiles for cuda:90
and a real index of the compiler-index test corpus. Answers are checked against the library calls the tools
wrap (irscope.graph, irscope.compare, compiler_index.queries, patterns.matcher) on the same files."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install -e '.[mcp]')")
from mcp.shared.exceptions import MCPError

import irscope
from compiler_index import queries as q
from irscope.graph import build
from patterns.facts import KernelFacts
from patterns.matcher import default_index, match
from tests.mcp.conftest import (
    ADD_ARGS,
    COPY_ARGS,
    HOSTILE_SECRET,
    SECRET,
    files_holding,
    hostile,
    make_workspace,
    server_params,
)
from tests.mcp.session import Session

TOOLS = {
    "capture",
    "list_trajectories",
    "trajectory_summary",
    "query_trajectory",
    "diff_trajectories",
    "snapshot_ir",
    "index_pass",
    "index_creators",
    "index_erasers",
    "index_conditions",
    "index_remarks",
    "index_callers",
    "index_callees",
    "index_search",
    "index_explain",
    "list_cards",
    "match_cards",
    "show_card",
    "diagnose",
    "validate_candidate",
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("mcp-tools"))


@pytest.fixture(scope="module")
def session(ws: Path, corpus_index: Path):
    # credentials in the server's environment, and one allowlisted name that children do inherit
    env = {"OPENAI_API_KEY": SECRET, "GITHUB_TOKEN": SECRET, "TRITON_MCP_TEST_MARK": "inherited"}
    s = Session(server_params(ws, corpus_index, env))
    yield s
    s.close()


@pytest.fixture(scope="module")
def add(session: Session, ws: Path) -> irscope.Trajectory:
    """The `add` example captured through the tool; the trajectory as irscope loads it from the workspace."""
    res = session.ok(
        "capture", {"kernel": "kernels.py:add_kernel", "args": ADD_ARGS, "constexprs": {"BLOCK": 1024}, "name": "add"}
    )
    assert res["trajectory"] == "add" and res["compile_error"] is None
    assert res["path"] == ".irscope-mcp/trajectories/add"
    traj = irscope.load(ws / res["path"])
    assert res["snapshots"] == len(traj.snapshots) and res["changed_passes"] == len(traj.changed_passes())
    return traj


def test_every_tool_is_listed_with_input_and_output_schemas(session: Session):
    tools = session.run(lambda c: c.list_tools()).tools
    assert {t.name for t in tools} == TOOLS
    for t in tools:
        assert t.description and t.input_schema["type"] == "object"
        assert t.output_schema is not None and t.output_schema["type"] == "object", t.name


def test_summary_pages_the_passes_that_changed_the_ir(session: Session, add: irscope.Trajectory):
    edges = build(add).edges()
    s = session.ok("trajectory_summary", {"trajectory": "add", "limit": 5})
    assert [st["stage"] for st in s["stages"]] == add.stages
    assert s["changed_passes_page"] == {"total": len(edges), "offset": 0, "next_offset": 5}
    assert [p["snapshot"] for p in s["changed_passes"]] == [e.target for e in edges[:5]]
    coalesce = next(p for p in s["changed_passes"] if p["label"] == "ttgir[1] tritongpu-coalesce")
    edge = next(e for e in edges if e.pass_arg == "tritongpu-coalesce")
    assert coalesce["ops_added"]["ttg.convert_layout"] == edge.ops_added["ttg.convert_layout"] > 0
    assert s["resources"]["registers"] == add.resources["registers"]
    assert any(row["counter"] == "mem.load_vec4" for row in s["key_counters"])
    rest = session.ok("trajectory_summary", {"trajectory": "add", "offset": 5, "limit": 100})
    assert [p["snapshot"] for p in rest["changed_passes"]] == [e.target for e in edges[5:]]
    assert rest["changed_passes_page"]["next_offset"] is None
    listed = session.ok("list_trajectories")
    assert "add" in [row["name"] for row in listed["items"]]


def test_graph_queries_answer_as_irscope_query(session: Session, ws: Path, add: irscope.Trajectory):
    g = build(add)
    intro = session.ok("query_trajectory", {"trajectory": "add", "what": "introduced-by", "arg": "ttg.convert_layout"})
    assert [(i["snapshot"], i["pass_arg"], i["before"], i["after"]) for i in intro["items"]] == [
        (c.edge.target, c.edge.pass_arg, c.before, c.after) for c in g.introduced_by("ttg.convert_layout")
    ]
    removed = session.ok("query_trajectory", {"trajectory": "add", "what": "removed-by", "arg": "ttg.convert_layout"})
    assert [i["snapshot"] for i in removed["items"]] == [c.edge.target for c in g.removed_by("ttg.convert_layout")]
    first = session.ok("query_trajectory", {"trajectory": "add", "what": "timeline", "arg": "mem.load", "limit": 10})
    assert first["total"] == len(g.nodes()) and first["next_offset"] == 10
    second = session.ok(
        "query_trajectory", {"trajectory": "add", "what": "timeline", "arg": "mem.load", "offset": 10, "limit": 10}
    )
    assert [i["value"] for i in first["items"] + second["items"]] == [v for _, _, v in g.timeline("mem.load")][:20]
    line = next(i for i, text in enumerate((ws / "kernels.py").read_text().splitlines(), 1) if "x = tl.load(" in text)
    at_line = session.ok("query_trajectory", {"trajectory": "add", "what": "line", "arg": str(line)})
    assert at_line["context"]["source"] == "x = tl.load(x_ptr + offs, mask=mask)"
    assert [i["snapshot"] for i in at_line["items"]] == [e.target for e, _ in g.passes_touching_line(line)][:30]
    hit = session.ok("query_trajectory", {"trajectory": "add", "what": "first", "arg": "ttg.convert_layout > 0"})
    assert hit["items"][0]["snapshot"] == g.first_where("ttg.convert_layout > 0").index
    none = session.ok("query_trajectory", {"trajectory": "add", "what": "introduced-by", "arg": "ttng.warp_group_dot"})
    assert none["items"] == [] and "no pass raised" in none["context"]["note"]


def test_diff_of_two_configurations(session: Session, add: irscope.Trajectory):
    w8 = session.ok(
        "capture",
        {
            "kernel": "kernels.py:add_kernel",
            "args": ADD_ARGS,
            "constexprs": {"BLOCK": 1024},
            "num_warps": 8,
            "name": "add_w8",
        },
    )
    d = session.ok("diff_trajectories", {"a": "add", "b": w8["trajectory"]})
    deltas = {c["counter"]: c["delta"] for c in d["counters"]}
    assert deltas["res.num_warps"] == 8 - 4  # the one option the two captures differ in
    assert d["total"] >= len(d["lines"])


def test_snapshot_ir_is_paged(session: Session, add: irscope.Trajectory):
    snap = add.find("ttgir[1]")
    lines = snap.text.splitlines()
    p = session.ok("snapshot_ir", {"trajectory": "add", "snapshot": "ttgir[1]", "limit": 10})
    assert p["snapshot"] == snap.index and p["label"] == "ttgir[1] tritongpu-coalesce"
    assert p["text"].splitlines() == lines[:10] and p["total"] == len(lines) and p["next_offset"] == 10
    d = session.ok("snapshot_ir", {"trajectory": "add", "snapshot": str(snap.index), "view": "diff", "limit": 200})
    assert any(ln.startswith("+") and "ttg.convert_layout" in ln for ln in d["text"].splitlines())


def test_compiler_index_queries(session: Session, corpus_index: Path, add: irscope.Trajectory):
    (info,) = session.ok("index_pass", {"name": "toygpu-fuse-relayouts"})["items"]
    assert info["argument"] == "toygpu-fuse-relayouts" and info["td"]["file"].endswith("Passes.td")
    creators = session.ok("index_creators", {"op": "tgpu.relayout", "limit": 1})
    assert creators["total"] == len(q.creators(corpus_index, "tgpu.relayout").sites) > 1
    assert creators["next_offset"] == 1 and creators["header"]["op"]["name"] == "tgpu.relayout"
    erasers = session.ok("index_erasers", {"op": "tgpu.barrier"})
    assert any(s["loc"]["file"].endswith("BarrierOpToLLVM.cpp") for s in erasers["items"])
    gates = session.ok("index_conditions", {"symbol": "WidenTileLoad"})["items"]
    assert "computeCapability < 80" in [g["condition"] for g in gates]
    (remark,) = session.ok("index_remarks", {"text": "run 3 is shorter than 4"})["items"]
    assert remark["kind"] == "debug" and remark["function"]["name"] == "isContiguousEnough"
    callers = session.ok("index_callers", {"symbol": "pickVectorWidth"})["items"]
    assert {e["caller"]["name"] for e in callers} == {e.caller.name for e in q.callers(corpus_index, "pickVectorWidth")}
    callees = session.ok("index_callees", {"symbol": "ToyGPUVectorizeLoadsPass::runOnOperation", "limit": 3})
    assert callees["total"] == len(q.callees(corpus_index, "ToyGPUVectorizeLoadsPass::runOnOperation"))
    assert len(callees["items"]) == 3
    hits = session.ok("index_search", {"text": "contiguous"})["items"]
    assert "isContiguousEnough" in [h["name"] for h in hits]
    # the corpus knows no Triton pass: explain still reads the pass's op deltas from the trajectory and says so
    why = session.ok("index_explain", {"trajectory": "add", "pass_ref": "tritongpu-coalesce"})
    coalesce = add.find("tritongpu-coalesce")
    assert why["header"]["label"] == coalesce.label and why["header"]["target"] == "cuda:90"
    assert why["items"][0]["op"] == "ttg.convert_layout"
    assert why["items"][0]["after"] == build(add).value(coalesce.index, "ttg.convert_layout")


def test_cards_match_show_and_list(session: Session, ws: Path, add: irscope.Trajectory):
    listed = session.ok("list_cards", {"limit": 100})
    assert listed["total"] == len(default_index().cards) and listed["next_offset"] is None
    m = session.ok("match_cards", {"source": "kernels.py", "kernel": "add_kernel", "trajectory": "add", "limit": 30})
    facts = KernelFacts.from_trajectory(add).merge(KernelFacts.from_source_file(ws / "kernels.py", "add_kernel"))
    assert [r["card"] for r in m["items"]] == [r.card.id for r in match(facts)]
    assert "divisibility-hints" in [r["card"] for r in m["items"]]
    card = default_index().cards["divisibility-hints"]
    shown = session.ok("show_card", {"card": "divisibility-hints", "limit": 5})
    assert shown["text"].splitlines() == card.path.read_text().splitlines()[:5] and shown["next_offset"] == 5


def test_a_failed_compile_is_an_answer_with_the_compilers_message(session: Session, ws: Path):
    cap = session.ok(
        "capture",
        {"kernel": "bad_dot.py:bad_dot", "args": {"x_ptr": "*fp16", "out_ptr": "*fp16"}, "constexprs": {"BLOCK": 16}},
    )
    traj = irscope.load(ws / cap["path"])
    assert traj.error is not None and "equal ranks" in cap["compile_error"]  # tl.dot's own message
    assert session.ok("trajectory_summary", {"trajectory": cap["trajectory"]})["compile_error"] == cap["compile_error"]


def test_validate_candidate_runs_the_cpu_validation(session: Session, ws: Path):
    v = session.ok("validate_candidate", {"op": "new_gelu", "candidate": "new_gelu.py"})
    assert v["correct"] and not v["timed"] and "timing needs a GPU" in v["note"]
    assert [c["case"] for c in v["cases"]] == ["s1", "s2"]  # new_gelu's small cases (suite/ops/new_gelu)
    assert (ws / v["report"]).is_file()


def test_kernel_module_sees_no_credentials(session: Session, ws: Path):
    cap = session.ok(
        "capture",
        {"kernel": "secret_reader.py:copy_kernel", "args": COPY_ARGS, "constexprs": {"BLOCK": 128}},
    )
    seen_text = (ws / cap["path"] / "env_seen.json").read_text()
    seen = json.loads(seen_text)
    assert seen["TRITON_MCP_TEST_MARK"] == "inherited"  # the server's environment does reach the child …
    assert "OPENAI_API_KEY" not in seen and "GITHUB_TOKEN" not in seen  # … but not its credentials
    assert SECRET not in seen_text
    # confined: HOME, TMPDIR and Triton's cache in a scratch directory of the workspace, gone after the call
    home = Path(seen["HOME"])
    assert home.parent == ws / ".irscope-mcp" / "scratch" and not home.exists()
    assert seen["TMPDIR"] == seen["HOME"] and Path(seen["TRITON_CACHE_DIR"]).parent == home


def test_a_hostile_kernel_module_is_confined(session: Session, ws: Path):
    with hostile(ws) as h:
        r = session.call("capture", {"kernel": h.kernel, "args": COPY_ARGS, "constexprs": {"BLOCK": 128}})
    answer = r.content[0].text  # type: ignore[union-attr]
    assert not h.outside.exists()  # (a) no write outside the workspace …
    assert not h.beside.exists()  # … nor into the kernel's folder, which it sees read-only
    assert h.connections == []  # (b) no network: the loopback server heard nothing
    assert HOSTILE_SECRET not in answer and not files_holding(ws, HOSTILE_SECRET)  # (c) the secret was not read
    # the link it left in its output, which the server would follow out of the workspace, discards the output
    assert r.is_error and "/stolen: a link, FIFO or device; 1 in all" in answer and "discarded unread" in answer
    assert not any(d.name.startswith("hostile") for d in (ws / ".irscope-mcp" / "trajectories").iterdir())


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root server's child runs under a user id of its own")
def test_a_kernel_other_users_cannot_read_is_refused_with_the_fix(session: Session, ws: Path):
    private = ws / "private"
    private.mkdir()
    shutil.copy(ws / "kernels.py", private / "kernels.py")
    private.chmod(0o700)
    reason = session.error("capture", {"kernel": "private/kernels.py:add_kernel", "args": ADD_ARGS})
    assert reason.endswith(
        "private/kernels.py: the confined child runs under a user id of its own and cannot read "
        "it; make the file and its folder readable by others (chmod o+r FILE; chmod o+rx FOLDER)"
    )


def test_diagnose_runs_confined_and_reads_the_index(session: Session, ws: Path, corpus_index: Path):
    top2 = {"scores_ptr": "*fp32", "out_ptr": "*fp32", "n_groups": "8", "group_size": "128"}
    d = session.ok(
        "diagnose", {"kernel": "kernels.py:moe_group_top2_argmax", "args": top2, "constexprs": {"BLOCK": 128}}
    )
    assert (d["outcome"], d["level"]) == ("actionable", "L3")
    l4 = next(lv for lv in d["levels"] if lv["level"] == "L4")
    # L4 opened the index (a copy beside the output, removed after) and names it as the server knows it
    assert l4["status"] == "ran" and f"compiler index {corpus_index}" in l4["notes"], l4
    assert not list((ws / d["report"]).parent.glob(".compiler-index.db*"))


BAD = [
    ("capture", {"kernel": "../outside/kernels.py:add_kernel"}, "outside the workspace"),
    ("capture", {"kernel": "/etc/hostname:k"}, "outside the workspace"),
    ("capture", {"kernel": "escape.py:add_kernel"}, "outside the workspace"),  # a symlink leading out
    ("trajectory_summary", {"trajectory": "escape_dir"}, "outside the workspace"),
    ("match_cards", {"source": "../outside/kernels.py"}, "outside the workspace"),
    ("validate_candidate", {"op": "new_gelu", "candidate": "escape.py"}, "outside the workspace"),
    ("capture", {"kernel": "kernels.py"}, "expected FILE.py:KERNEL"),
    ("capture", {"kernel": "missing.py:k"}, "no such file"),
    ("capture", {"kernel": "broken.py:k"}, "syntax error: '(' was never closed"),
    ("capture", {"kernel": "kernels.py:nope"}, "add_kernel"),  # names the kernels the file defines
    ("capture", {"kernel": "kernels.py:add_kernel", "args": {"x_ptr": "*fp99"}}, "unknown dtype 'fp99'"),
    ("capture", {"kernel": "kernels.py:add_kernel", "target": "cuda:nope"}, "unknown target"),
    ("capture", {"kernel": "kernels.py:add_kernel", "args": {"x_ptr": "*fp32"}}, "missing argument"),
    ("capture", {"kernel": "kernels.py:add_kernel", "name": "../evil"}, "name '../evil'"),
    ("trajectory_summary", {"trajectory": "nope"}, "no stored trajectory"),
    ("query_trajectory", {"trajectory": "add", "what": "line", "arg": "x"}, "line number"),
    ("query_trajectory", {"trajectory": "add", "what": "first", "arg": "so what"}, "NAME OP NUMBER"),
    ("query_trajectory", {"trajectory": "add", "what": "bogus", "arg": "x"}, "what"),
    ("snapshot_ir", {"trajectory": "add", "snapshot": "0", "limit": 5000}, "limit"),
    ("snapshot_ir", {"trajectory": "add", "snapshot": "9999"}, "out of range"),
    ("index_pass", {"name": "no-such-pass"}, "no pass named 'no-such-pass'"),
    ("index_creators", {"op": "tgpu.relay"}, "tgpu.relay"),
    ("index_explain", {"trajectory": "add", "pass_ref": "no-such-pass"}, "no snapshot matches"),
    ("show_card", {"card": "nope"}, "no card 'nope'"),
    ("validate_candidate", {"op": "no_such_op", "candidate": "new_gelu.py"}, "no operator 'no_such_op'"),
]


@pytest.mark.parametrize(("tool", "args", "reason"), BAD, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD)])
def test_bad_input_is_a_one_line_error(session: Session, add: irscope.Trajectory, tool: str, args: dict, reason: str):
    assert reason in session.error(tool, args)


def test_server_survives_bad_inputs_and_keeps_nothing_outside(session: Session, ws: Path):
    session.error("capture", {"kernel": "broken.py:k"})
    assert session.ok("list_trajectories")["total"] >= 1
    assert not (ws.parent / "outside" / ".irscope-mcp").exists()


def test_resources(session: Session, add: irscope.Trajectory):
    templates = {t.uri_template for t in session.run(lambda c: c.list_resource_templates()).resource_templates}
    assert templates == {
        "irscope://trajectories/{name}",
        "irscope://trajectories/{name}/snapshots/{index}{?offset}",
        "irscope://cards/{card_id}",
    }
    static = {str(r.uri) for r in session.run(lambda c: c.list_resources()).resources}
    assert static == {"irscope://trajectories", "irscope://cards"}

    def read(uri: str) -> str:
        return session.run(lambda c: c.read_resource(uri)).contents[0].text  # type: ignore[union-attr]

    assert "add" in json.loads(read("irscope://trajectories"))["trajectories"]
    assert json.loads(read("irscope://trajectories/add"))["kernel"] == "add_kernel"
    snap = add.find("ttgir[1]")
    page = json.loads(read(f"irscope://trajectories/add/snapshots/{snap.index}?offset=3"))
    assert page["offset"] == 3 and page["text"].splitlines()[0] == snap.text.splitlines()[3]
    assert "divisibility-hints" in [c["id"] for c in json.loads(read("irscope://cards"))["cards"]]
    assert read("irscope://cards/divisibility-hints") == default_index().cards["divisibility-hints"].path.read_text()
    with pytest.raises(MCPError, match="no card 'nope'"):
        read("irscope://cards/nope")
