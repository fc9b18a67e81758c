"""A scripted agent session end to end, as a coding agent would drive it over stdio: capture a kernel, read the
summary, ask which pass introduced the symptom, ask the compiler index what gates that pass, diagnose the kernel.
Each step's input comes from the previous answer. With a Triton checkout the index is Triton's own and the
conditions are checked; without one the corpus index stands in and says it knows no such pass. The same
workspace is then served over streamable HTTP on the loopback interface (`irscope mcp --http PORT`)."""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install -e '.[mcp]')")

from tests.mcp.conftest import REPO, make_workspace, server_params
from tests.mcp.session import Session

TOP2 = {"scores_ptr": "*fp32", "out_ptr": "*fp32", "n_groups": "8", "group_size": "128"}  # the top2_argmax example's


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("mcp-agent"))


@pytest.fixture(scope="module")
def index(corpus_index: Path, triton_index: Path | None) -> Path:
    return triton_index or corpus_index


def test_scripted_agent_session(ws: Path, index: Path, triton_index: Path | None):
    started = time.monotonic()
    session = Session(server_params(ws, index))
    try:
        cap = session.ok(
            "capture",
            {"kernel": "kernels.py:moe_group_top2_argmax", "args": TOP2, "constexprs": {"BLOCK": 128}},
        )
        name = cap["trajectory"]
        summary = session.ok("trajectory_summary", {"trajectory": name, "limit": 50})
        # the agent picks the counter the summary shows growing in the lowering to LLVM: warp shuffles
        lowering = next(p for p in summary["changed_passes"] if p["counters"].get("sync.shuffle", 0) > 0)
        intro = session.ok("query_trajectory", {"trajectory": name, "what": "introduced-by", "arg": "sync.shuffle"})
        culprit = intro["items"][0]
        assert culprit["snapshot"] == lowering["snapshot"] and culprit["before"] == 0 < culprit["after"]
        assert culprit["pass_arg"] == "convert-triton-gpu-to-llvm"
        ask = {"symbol": culprit["pass_arg"], "target": "cuda:90", "limit": 10}
        if triton_index is not None:
            gates = session.ok("index_conditions", ask)
            assert gates["total"] > len(gates["items"]) == 10 and gates["next_offset"] == 10
            assert all(g["loc"]["file"] and g["loc"]["line"] > 0 for g in gates["items"])
            assert "ConvertTritonGPUToLLVM" in " ".join(gates["header"]["notes"])
        else:
            assert "convert-triton-gpu-to-llvm" in session.error("index_conditions", ask)
        d = session.ok(
            "diagnose",
            {"kernel": "kernels.py:moe_group_top2_argmax", "args": TOP2, "constexprs": {"BLOCK": 128}},
        )
        # L3 ties the argmax line to the shuffles that pass made and stops: the index-reduction rewrite
        assert (d["outcome"], d["level"]) == ("actionable", "L3") and d["family"].startswith("index-reduction")
        assert [lv["level"] for lv in d["levels"]] == ["L1", "L2", "L3", "L4"]
        l3 = next(lv for lv in d["levels"] if lv["level"] == "L3")
        assert any("convert-triton-gpu-to-llvm" in claim for claim in l3["evidence"])
        if triton_index is not None:  # L4, run beyond the stop, cites the reduction lowering in Triton's C++
            l4 = next(lv for lv in d["levels"] if lv["level"] == "L4")
            assert any("ReduceOpToLLVM.cpp" in claim for claim in l4["evidence"])
        assert (ws / d["report"]).is_file()
    finally:
        session.close()
    assert time.monotonic() - started < 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _non_loopback_address() -> str | None:
    """This machine's address on its default route (connecting a UDP socket sends nothing), None without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere, only looked up in the routing table
        except OSError:
            return None
        address = str(s.getsockname()[0])
    return None if address.startswith("127.") else address


def test_streamable_http_on_loopback(ws: Path, corpus_index: Path):
    port = _free_port()
    argv = [sys.executable, "-m", "irscope.cli", "mcp", "--http", str(port), "--workspace", str(ws)]
    server = subprocess.Popen(
        [*argv, "--db", str(corpus_index)],
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.2)
        session = Session(f"http://127.0.0.1:{port}/mcp")
        try:
            cap = session.ok(
                "capture",
                {
                    "kernel": "kernels.py:add_kernel",
                    "args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "1024"},
                    "constexprs": {"BLOCK": 256},
                    "name": "over_http",
                },
            )
            listed = session.ok("list_trajectories")
            assert cap["trajectory"] in [t["name"] for t in listed["items"]]
            assert "outside the workspace" in session.error("trajectory_summary", {"trajectory": "escape_dir"})
        finally:
            session.close()
        # a page of another origin reaching the port through a rebound DNS name is turned away by its Host header
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request(
            "POST", "/mcp", body="{}", headers={"Host": "attacker.example", "Content-Type": "application/json"}
        )
        assert conn.getresponse().status == 421  # Misdirected Request: the SDK's answer to a non-loopback Host
        conn.close()
        # bound to the loopback interface only: this machine's other address refuses the connection
        address = _non_loopback_address()
        if address is not None:
            with pytest.raises(OSError):
                socket.create_connection((address, port), timeout=2).close()
    finally:
        server.kill()
        server.wait()
