"""The optimization loop: decisions, best-round progression, policy-driven rounds, kill -9 and resume."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ladder.cli import main as ladder_main
from ladder.context import Context
from ladder.evidence import FAILED, RAN, Evidence, Hypothesis, LevelResult, RewriteFamily
from ladder.levels.base import Level
from ladder.loop import Loop, LoopConfig, LoopError
from ladder.records import History
from ladder.rewriters.llm import LLMRewriter
from ladder.validation import Validation
from suite.operator import get_operator
from tests.ladder import candidates, h200
from tests.ladder.chat_server import ChatServer, Reply, Status

OP = get_operator("new_gelu")
REPO = Path(__file__).resolve().parents[2]

FAST = candidates.module("0.5 * x * (1.0 + t) + 0.0")
SLOW = candidates.module("0.5 * x * (1.0 + t) * 1.0")
AT_SOL = candidates.module("(0.5 * x) * (1.0 + t)")
NOISE = candidates.module("0.5 * x * (1.0 + t) - 0.0")  # 1 % faster than the initial kernel: run-to-run spread


def moe(times) -> Validation:
    return h200.timed(tuple(zip(times, h200.MOE_SOL)), validator="table")


class TableValidator:
    """Validation results looked up by candidate source: H200 timings stand in for the GPU harness."""

    name = "table"

    def __init__(self):
        wrong = Validation("table", "NVIDIA H200", False, "c1: 4096 elements outside rtol")
        self.table = {
            OP.initial_source(): moe(h200.MOE_NAIVE),
            FAST: moe(h200.MOE_BLOCKED),
            SLOW: moe(tuple(t * 1.5 for t in h200.MOE_NAIVE)),
            AT_SOL: moe(tuple(s * 1.1 for s in h200.MOE_SOL)),
            candidates.WRONG: wrong,
            NOISE: moe(tuple(t / 1.01 for t in h200.MOE_NAIVE)),
        }
        self.seen: list[str] = []
        self.compiled: list[bool] = []  # with_compile per call: only the baseline times torch.compile

    def validate(self, op, candidate: Path, workdir: Path, with_compile: bool = False) -> Validation:
        self.seen.append(candidate.read_text())
        self.compiled.append(with_compile)
        return self.table[candidate.read_text()]


class SettlesL2(Level):
    """An L2 that settles on more-work-per-program for every case (the policy still runs its tests)."""

    name = "L2"

    def gather(self, ctx: Context) -> LevelResult:
        e = Evidence("L2.ncu.c3", "L2", "c3: 8.4M programs, DRAM 12%", ctx.validation_ref, ("c3",))
        return LevelResult(
            "L2",
            RAN,
            evidence=(e,),
            hypotheses=(Hypothesis("latency-bound", "kernel k", (), (e.id,)),),
            families=(RewriteFamily("more-work-per-program", "block tokens", (e.id,)),),
        )


def loop(tmp_path: Path, srv: ChatServer, rounds: int, diagnose: bool, levels=None, validator=None) -> Loop:
    rw = LLMRewriter("test-model", base_url=srv.url, api_key="k")
    return Loop(
        History(tmp_path),
        tmp_path,
        rw,
        validator or TableValidator(),
        levels or {},
        LoopConfig(rounds=rounds, diagnose=diagnose),
    )


def test_rounds_accept_faster_reject_slower_and_wrong_and_build_on_the_best(tmp_path):
    replies = [Reply(candidates.reply(s)) for s in (FAST, SLOW, candidates.WRONG)]
    validator = TableValidator()
    with ChatServer(replies) as srv:
        rounds = loop(tmp_path, srv, 3, diagnose=False, validator=validator).run(OP)
    assert validator.compiled == [True, False, False, False]  # torch.compile timed once, with the baseline
    assert [(r.round, r.decision, r.base_round) for r in rounds] == [
        (0, "baseline", 0),
        (1, "accepted", 0),
        (2, "rejected", 1),
        (3, "rejected", 1),
    ]
    assert rounds[1].speedup == pytest.approx(16.0, rel=0.05) and rounds[1].speedup_initial == rounds[1].speedup
    assert rounds[2].speedup < 1 and "not faster" in rounds[2].reason
    assert rounds[3].reason == "incorrect: c1: 4096 elements outside rtol" and rounds[3].speedup is None
    assert "do not repeat" in rounds[3].next
    # Round 2 rewrote round 1's kernel, which the prompt showed as the current one.
    assert "## Current kernel (round 1)" in srv.requests[1]["messages"][1]["content"]
    assert FAST.strip() in srv.requests[1]["messages"][1]["content"]
    with History(tmp_path) as h:
        assert h.best("new_gelu").round == 1
    assert (tmp_path / "new_gelu" / "round-002" / "base.py").read_text() == FAST
    assert (tmp_path / "new_gelu" / "round-002" / "candidate.py").read_text() == SLOW
    # the best kept kernel (round 1, not the faster-looking but rejected ones) is what `export --format kernels` writes
    best = tmp_path / "best"
    assert ladder_main(["export", str(tmp_path), "--format", "kernels", "-o", str(best)]) == 0
    assert [p.name for p in best.iterdir()] == ["new_gelu.py"] and (best / "new_gelu.py").read_text() == FAST


def test_a_gain_within_the_noise_margin_is_not_accepted(tmp_path):
    with ChatServer([Reply(candidates.reply(NOISE))]) as srv:
        rounds = loop(tmp_path, srv, 1, diagnose=False).run(OP)
    r = rounds[1]
    assert r.decision == "rejected" and r.speedup == pytest.approx(1.01)
    assert r.reason == "correct, 1.01x of round 0: within the 2% noise margin, not a gain"


def test_policy_drives_the_round_and_at_target_ends_the_run(tmp_path):
    with ChatServer([Reply(candidates.reply(AT_SOL)), Reply("unused")]) as srv:
        lp = loop(tmp_path, srv, 5, diagnose=True, levels={"L2": SettlesL2()})
        rounds = lp.run(OP)
        assert [r.decision for r in rounds] == ["baseline", "accepted", "at-target"]
        assert len(srv.requests) == 1
        r1 = rounds[1]
        assert r1.level == "L2" and r1.rewrite.family == "more-work-per-program"
        assert [x["level"] for x in r1.diagnosis.escalations()] == ["L1"]
        assert r1.diagnosis.evidence()[0].source.path.endswith("round-000/validation.json")
        assert "Rewrite family: more-work-per-program" in srv.requests[0]["messages"][1]["content"]
        assert rounds[2].next.startswith("stop") and rounds[2].diagnosis.results == ()
        assert len(lp.run(OP)) == 3  # resuming an at-target operator adds nothing


def test_an_inconclusive_ladder_forces_no_rewrite_and_a_repeated_diagnosis_ends_the_run(tmp_path):
    with ChatServer([]) as srv:
        lp = loop(tmp_path, srv, 5, diagnose=True)
        rounds = lp.run(OP)
        assert [r.decision for r in rounds] == ["baseline", "inconclusive", "inconclusive"]
        assert srv.requests == [] and rounds[1].rewrite is None
        assert rounds[1].reason.startswith("no level could stop: L1 a:dominant: L1 unavailable: no L1 level")
        assert rounds[1].diagnosis.reached == "L4"
        assert rounds[1].next == "gather the evidence these levels could not: L1, L2, L3, L4"
        assert rounds[2].reason == rounds[1].reason  # nothing new was learned: rounds 3..5 would say it again
        assert rounds[2].next.startswith("stop: this diagnosis repeats round 1's on the same kernel")
        assert len(lp.run(OP)) == 3  # a resume adds nothing


class FailsInItsRound(Level):
    """An L3 whose failure message names the round's own directory, as a capture traceback does."""

    name = "L3"

    def gather(self, ctx: Context) -> LevelResult:
        return LevelResult("L3", FAILED, reason=f"CaptureError: capturing {ctx.workdir}/base.py exited 1")


def test_a_repeated_failure_ends_the_run_although_its_message_names_each_round(tmp_path):
    with ChatServer([]) as srv:
        rounds = loop(tmp_path, srv, 5, diagnose=True, levels={"L3": FailsInItsRound()}).run(OP)
    assert [r.decision for r in rounds] == ["baseline", "inconclusive", "inconclusive"]
    assert "round-001" in rounds[1].reason and "round-002" in rounds[2].reason
    assert rounds[2].next.startswith("stop: this diagnosis repeats round 1's")


def test_malformed_replies_make_an_invalid_round_and_the_loop_goes_on(tmp_path):
    with ChatServer([Reply("no code")] * 3 + [Reply(candidates.reply(FAST))]) as srv:
        rounds = loop(tmp_path, srv, 2, diagnose=False).run(OP)
    assert [r.decision for r in rounds] == ["baseline", "invalid", "accepted"]
    assert rounds[1].reason == "no usable module: the reply has no ```python code block"
    assert len(rounds[1].rewrite.attempts) == 3


def test_resuming_with_another_validator_is_refused(tmp_path):
    with ChatServer([]) as srv:
        loop(tmp_path, srv, 1, diagnose=True).run(OP)

        class Other(TableValidator):
            name = "other"

        with pytest.raises(LoopError, match="was validated with 'table'"):
            loop(tmp_path, srv, 2, diagnose=True, validator=Other()).run(OP)


def _optimize(url: str, out: Path, rounds: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ladder.cli",
        "optimize",
        "new_gelu",
        "--rounds",
        str(rounds),
        "--llm",
        "m",
        "--base-url",
        url,
        "--out",
        str(out),
        "--no-ladder",
        "--quiet",
    ]


def _env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-test", "PYTHONPATH": str(REPO)}


@pytest.mark.slow
def test_kill_9_mid_run_loses_no_finished_round_and_duplicates_none(tmp_path):
    out = tmp_path / "run"
    release = threading.Event()

    def held_on_round_2(body):
        if len(srv.requests) == 2:  # round 2's request: hold it until the run is killed
            release.wait(120)
        return Reply(candidates.reply(candidates.VALID))

    with ChatServer(held_on_round_2) as srv:
        proc = subprocess.Popen(
            _optimize(srv.url, out, 3),
            cwd=tmp_path,
            env=_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 240
        while len(srv.requests) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(srv.requests) == 2, proc.communicate()[0] if proc.poll() is not None else "no round 2 request"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        release.set()
    assert proc.returncode == -signal.SIGKILL
    with History(out) as h:
        before = {r.round: r.to_json() for r in h.rounds("new_gelu")}
    assert sorted(before) == [0, 1] and before[1]["decision"] == "untimed"

    with ChatServer(lambda body: Reply(candidates.reply(candidates.VALID))) as srv:
        done = subprocess.run(
            _optimize(srv.url, out, 3), cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=300
        )
    assert done.returncode == 0, done.stderr
    assert len(srv.requests) == 2  # rounds 2 and 3 only: nothing finished was redone
    with History(out) as h:
        after = {r.round: r.to_json() for r in h.rounds("new_gelu")}
    assert sorted(after) == [0, 1, 2, 3]
    assert after[0] == before[0] and after[1] == before[1]
    counts = sqlite3.connect(out / "history.sqlite").execute("SELECT count(*), count(DISTINCT round) FROM rounds")
    assert counts.fetchone() == (4, 4)


def test_an_unreachable_rewriter_stops_the_run_for_a_later_resume(tmp_path):
    denied = Status(401, {}, '{"error": {"message": "invalid api key"}}')
    with ChatServer([denied]) as srv:
        done = subprocess.run(
            _optimize(srv.url, tmp_path / "run", 2),
            cwd=tmp_path,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 3
    assert "rewriter is unavailable" in done.stderr and "run the same command again to resume" in done.stderr
    with History(tmp_path / "run") as h:
        assert [r.round for r in h.rounds()] == [0]


def test_bad_command_lines_get_clear_errors(tmp_path):
    def run(*extra: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "ladder.cli", "optimize", *extra]
        return subprocess.run(cmd, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=120)

    r = run("no_such_op", "--llm", "m", "--out", str(tmp_path))
    assert r.returncode == 2 and "no operator 'no_such_op'" in r.stderr
    r = run("new_gelu", "--offline", "--out", str(tmp_path), "--deadline-s", "0")
    assert r.returncode == 2 and "--deadline-s must be > 0" in r.stderr
    r = run("new_gelu", "--offline", "--out", str(tmp_path), "--index", str(tmp_path / "none.db"))
    assert r.returncode == 2 and "none.db does not exist: build it with `compiler-index build" in r.stderr
    r = run("new_gelu", "--llm", "m", "--out", str(tmp_path), "--rounds", "0")
    assert r.returncode == 2 and "--rounds must be ≥ 1" in r.stderr
    r = run("new_gelu", "--offline", "--out", str(tmp_path), "--min-gain", "1.5")
    assert r.returncode == 2 and "--min-gain must be in [0, 1), got 1.5" in r.stderr
    r = run("new_gelu", "--offline", "--out", str(tmp_path), "--ncu-cases", "0")
    assert r.returncode == 2 and "--ncu-cases must be ≥ 1, got 0" in r.stderr
