"""The LLM rewriter end to end against a real chat-completions server on loopback (scripted replies)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ladder.context import Context, PastRound, operator_context
from ladder.evidence import ARTIFACT, RAN, Evidence, Hypothesis, LevelResult, RewriteFamily, SourceRef
from ladder.levels.base import Level
from ladder.policy import Diagnosis, climb
from ladder.rewriters import RewriteRequest, RewriterUnavailable
from ladder.rewriters.llm import LLMRewriter
from suite.operator import get_operator
from tests.ladder import candidates, h200
from tests.ladder.chat_server import ChatServer, Reply, Status

OP = get_operator("new_gelu")
VALIDATION = h200.timed(h200.NEW_GELU_EAGER)


class _L2(Level):
    name = "L2"

    def gather(self, ctx: Context) -> LevelResult:
        ref = SourceRef(ARTIFACT, "out/new_gelu/round-001/ncu/ncu-c3.ncu-rep")
        ev = tuple(Evidence(f"L2.ncu.{c}", "L2", f"{c}: DRAM traffic 3.0x the minimum", ref, (c,)) for c in h200.CASES)
        ids = tuple(e.id for e in ev)
        return LevelResult(
            "L2",
            RAN,
            evidence=ev,
            hypotheses=(Hypothesis("excess-memory-traffic", "kernel new_gelu_kernel", (), ids),),
            families=(RewriteFamily("fuse-passes", "read and write each byte once", ids),),
        )


def diagnosis(tmp_path: Path) -> Diagnosis:
    ctx = operator_context(OP, OP.kernel_path, tmp_path, 1, VALIDATION, SourceRef(ARTIFACT, "out/v.json"))
    d = climb(ctx, {"L2": _L2()})
    assert d.family is not None
    return d


def request(tmp_path: Path, diag: Diagnosis | None = None) -> RewriteRequest:
    history = (PastRound(1, "more-work-per-program", "rejected", 0.93, "slower on c1"),)
    return RewriteRequest(OP, 0, OP.initial_source(), VALIDATION, diag, history, tmp_path / "round-002")


def rewriter(srv: ChatServer, **kw) -> LLMRewriter:
    return LLMRewriter("test-model", base_url=srv.url, api_key="sk-test-secret", **kw)


def test_a_good_reply_becomes_the_candidate_and_the_prompt_carries_the_evidence_packet(tmp_path):
    with ChatServer([Reply(candidates.reply(candidates.VALID, "Blocks of 1024."))]) as srv:
        rw = rewriter(srv).rewrite(request(tmp_path, diagnosis(tmp_path)))
    assert rw.source == candidates.VALID and rw.description == "Blocks of 1024."
    assert rw.rewriter == "llm:test-model" and rw.family == "fuse-passes"
    assert "-    BLOCK = 256" in rw.diff and "+    gelu_kernel[(triton.cdiv(n, 1024),)]" in rw.diff
    assert [a.error for a in rw.attempts] == [None]
    assert rw.usage == {"prompt_tokens": 900, "completion_tokens": 300, "total_tokens": 1200}
    (body,), (headers,) = srv.requests, srv.headers
    assert body["model"] == "test-model" and headers["authorization"] == "Bearer sk-test-secret"
    user = body["messages"][1]["content"]
    # The packet: operator contract, current kernel, measurements, diagnosis with sourced evidence, history.
    assert "def reference(x: torch.Tensor)" in user and OP.initial_source().strip() in user
    assert "| c3 | 4.516 | 0.4994 | 11% |" in user
    assert "The ladder stopped at L2." in user and "Rewrite family: fuse-passes" in user
    assert "[L2.ncu.c3] c3: DRAM traffic 3.0x the minimum — out/new_gelu/round-001/ncu/ncu-c3.ncu-rep" in user
    assert "L1 (unavailable): a:dominant L1 unavailable: no L1 level is registered" in user
    assert "round 1: more-work-per-program → rejected, 0.93x vs its base (slower on c1)" in user
    assert "sk-test-secret" not in json.dumps(body)
    transcript = json.loads((tmp_path / "round-002" / "llm-transcript.json").read_text())
    assert [m["role"] for m in transcript] == ["system", "user", "assistant"]


def test_without_a_diagnosis_the_task_is_plain(tmp_path):
    with ChatServer([Reply(candidates.reply(candidates.VALID))]) as srv:
        rewriter(srv).rewrite(request(tmp_path))
    user = srv.requests[0]["messages"][1]["content"]
    assert "No diagnosis this round." in user and "Make the kernel faster" in user


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (Reply("Use a bigger BLOCK, that should help."), "no ```python code block"),
        (Reply("```python\ndef forward(x)\n    return x\n```"), "syntax error in the code block at line 1"),
        (Reply("```python\nimport torch\ndef run(x):\n    return x\n```"), "does not define a top-level function"),
        (Reply(candidates.reply("import os\n" + candidates.VALID)), "import of 'os' is not allowed"),
        (Reply("Here it is:\n```python\n" + candidates.VALID[:300], "length"), "cut off at the token limit"),
    ],
)
def test_a_malformed_reply_is_answered_with_its_error_and_retried(tmp_path, bad, error):
    with ChatServer([bad, Reply(candidates.reply(candidates.VALID))]) as srv:
        rw = rewriter(srv).rewrite(request(tmp_path, diagnosis(tmp_path)))
    assert rw.source == candidates.VALID
    assert len(rw.attempts) == 2 and error in rw.attempts[0].error and rw.attempts[1].error is None
    assert rw.usage["total_tokens"] == 2400
    second = srv.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": bad.content}
    assert second[-1]["role"] == "user" and error in second[-1]["content"]
    assert "exactly one ```python block" in second[-1]["content"]


def test_attempts_are_bounded_and_an_exhausted_round_has_no_source(tmp_path):
    script = [Reply("no code"), Reply("still no code"), Reply("```python\nx = 1\n```"), Reply("never asked")]
    with ChatServer(script) as srv:
        rw = rewriter(srv, attempts=3).rewrite(request(tmp_path, diagnosis(tmp_path)))
    assert rw.source == "" and rw.diff == "" and len(srv.requests) == 3
    assert rw.description == "no usable module after 3 attempts"
    assert [a.error is not None for a in rw.attempts] == [True, True, True]
    assert rw.usage["total_tokens"] == 3600


def test_rate_limits_and_server_errors_are_retried(tmp_path):
    script = [
        Status(429, {"retry-after-ms": "20"}),
        Status(500),
        Status(502),
        Reply(candidates.reply(candidates.VALID)),
    ]
    t0 = time.perf_counter()
    with ChatServer(script) as srv:
        rw = rewriter(srv).rewrite(request(tmp_path, diagnosis(tmp_path)))
    assert rw.source == candidates.VALID and len(srv.requests) == 4
    assert len(rw.attempts) == 1  # transport retries are not malformed replies
    assert time.perf_counter() - t0 < 10


def test_persistent_server_errors_make_the_rewriter_unavailable(tmp_path):
    with ChatServer([Status(500)] * 10) as srv, pytest.raises(RewriterUnavailable, match="HTTP 500"):
        rewriter(srv, http_retries=2).rewrite(request(tmp_path))
    assert len(srv.requests) == 3


def test_auth_errors_are_not_retried(tmp_path):
    denied = Status(401, {}, '{"error": {"message": "invalid api key", "type": "invalid_request_error"}}')
    with ChatServer([denied, Reply("unreached")]) as srv, pytest.raises(RewriterUnavailable, match="HTTP 401"):
        rewriter(srv).rewrite(request(tmp_path))
    assert len(srv.requests) == 1


def test_an_endpoint_that_is_down_makes_the_rewriter_unavailable(tmp_path):
    with ChatServer([]) as srv:
        url = srv.url
    rw = LLMRewriter("m", base_url=url, api_key="k", http_retries=0, timeout_s=5)
    with pytest.raises(RewriterUnavailable, match="no usable response"):
        rw.rewrite(request(tmp_path))


@pytest.mark.parametrize("name", sorted(candidates.HOSTILE))
def test_hostile_candidates_are_produced_not_run(tmp_path, name):
    marker = Path("/tmp/ladder-pwned")
    marker.unlink(missing_ok=True)
    with ChatServer([Reply(candidates.reply(candidates.HOSTILE[name]))]) as srv:
        rw = rewriter(srv).rewrite(request(tmp_path))
    assert rw.source == candidates.HOSTILE[name]
    assert not marker.exists()


def test_settings_come_from_the_standard_environment(tmp_path, monkeypatch):
    with ChatServer([Reply(candidates.reply(candidates.VALID))]) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
        LLMRewriter("env-model").rewrite(request(tmp_path))
    assert srv.headers[0]["authorization"] == "Bearer sk-from-env"
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ValueError, match="set OPENAI_API_KEY"):
        LLMRewriter("env-model")
