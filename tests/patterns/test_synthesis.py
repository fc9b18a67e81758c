"""Retrospective synthesis over a recorded history: rule-based mapping, proposals, the refreshed index, the
human-edit guard, and the LLM path against a real chat-completions server on loopback."""

import hashlib
import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from patterns.card import CARDS_DIR, load_card, load_cards
from patterns.history import HistoryFileError, read_history
from patterns.llm import LLMConfig
from patterns.synthesis import synthesize, write_outputs

HISTORY = Path(__file__).resolve().parent / "data" / "history.jsonl"

EXPECTED = {  # (op, round) → (card, how it was recognized)
    ("moe_group_top2", 1): ("index-free-top2", "recognizer"),
    ("moe_group_top2", 2): ("block-small-rows", "recognizer"),
    ("new_gelu", 1): ("block-size-warps", "applier"),
    ("new_gelu", 2): ("autotune-configs", "applier"),
    ("softmax", 1): ("online-softmax", "recognizer"),
    ("softmax", 2): ("cache-hints", "keywords"),
    ("layer_norm", 1): ("split-row-reduction", "declared-family"),
    ("cumsum_reverse", 1): ("scan-primitives", "recognizer"),
    ("kl_div", 1): ("fuse-kernel-chain", "recognizer"),
    ("softmax", 3): ("cache-hints", "declared-card"),
}


@pytest.fixture
def cards_copy(tmp_path):
    dest = tmp_path / "cards"
    shutil.copytree(CARDS_DIR, dest)
    return dest


def digest(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.glob("*.md")) if p.name != "INDEX.md"}


def test_every_round_gets_a_family_and_known_patterns_are_recognized():
    rounds = read_history(HISTORY)
    result = synthesize(rounds, load_cards(CARDS_DIR))
    assert len(result.assignments) == len(rounds) == 12
    for a in result.assignments:
        assert a.families, f"{a.round.op} round {a.round.round} has no family"
        key = (a.round.op, a.round.round)
        if key in EXPECTED:
            card, method = EXPECTED[key]
            assert (card, method) in [(f.card, f.method) for f in a.families], (key, a.families)
    cumsum = next(a for a in result.assignments if a.round.op == "cumsum_reverse")
    assert any("after.src.scan_reverse" in e for f in cumsum.families for e in f.evidence)
    # the two rounds no card explains become proposals, valid cards of their own family
    proposed = {a.round.op: a for a in result.assignments if a.proposal}
    assert set(proposed) == {"matmul_irregular", "rms_norm_ch"}
    ws = result.proposals[proposed["matmul_irregular"].proposal]
    assert ws["status"] == "proposed" and ws["family"] == "warp-specialize"
    assert {"when": 'l2.bottleneck == "compute"', "why": "recorded before round 3 of matmul_irregular"} in ws[
        "symptoms"
    ]
    assert "warp_specialize=True" in ws["example"]["after"] and ws["evidence_log"][0]["speedup"] == 1.12


def test_outputs_index_and_proposals_without_touching_curated_cards(cards_copy):
    before = digest(cards_copy)
    result = synthesize(read_history(HISTORY), load_cards(cards_copy))
    written = write_outputs(result, cards_copy, cards_copy)
    assert digest(cards_copy) == before
    index = json.loads((cards_copy / "index.json").read_text())
    assert index["format"] == "irscope-pattern-index" and index["format_version"] == 1
    assert "warp-specialize" in index["families"] and "index-reduction" in index["families"]
    hist = index["cards"]["index-free-top2"]["history"]
    assert hist == [
        {
            "op": "moe_group_top2",
            "round": 1,
            "outcome": "accepted",
            "speedup": 1.42,
            "change": hist[0]["change"],
            "source": f"{HISTORY}:1",
            "method": "recognizer",
        }
    ]
    assert len(index["rounds"]) == 12
    proposals = sorted((cards_copy / "proposed").glob("*.md"))
    assert len(proposals) == 2 and all(load_card(p).status == "proposed" for p in proposals)
    for p in proposals:
        rel = f"proposed/{p.name}"
        assert index["generated_files"][rel] == hashlib.sha256(p.read_bytes()).hexdigest()
    md = (cards_copy / "INDEX.md").read_text()
    assert "| index-free-top2: " in md and "| 1 | 1 | 1.42x |" in md
    assert set(written.files) >= {cards_copy / "index.json", cards_copy / "INDEX.md", *proposals}
    assert load_cards(cards_copy)  # the directory still loads, proposals included


def test_a_second_run_maps_to_earlier_proposals_and_keeps_human_edits(cards_copy):
    rounds = read_history(HISTORY)
    write_outputs(synthesize(rounds, load_cards(cards_copy)), cards_copy, cards_copy)
    ws = next((cards_copy / "proposed").glob("warp-specialize*.md"))
    edited = ws.read_text().replace("status: proposed", "status: proposed\nkind: optimization", 1)
    edited = edited.replace("## Rewrite\n", "## Rewrite\n\nReviewed: keep the producer warps at 4 registers.\n", 1)
    ws.write_text(edited)
    (cards_copy / "INDEX.md").write_text("# my notes\n")
    again = synthesize(rounds, load_cards(cards_copy))
    assert again.proposals == {}  # both rounds now map to the existing proposals
    ws_round = next(a for a in again.assignments if a.round.op == "matmul_irregular")
    assert ws_round.families[0].card == ws.stem
    # a changed proposal document must not replace the person's edit, nor the edited INDEX.md
    again.proposals[ws.stem] = {**load_card(ws).document, "title": "Something else entirely"}
    written = write_outputs(again, cards_copy, cards_copy)
    assert ws.read_text() == edited and (cards_copy / "INDEX.md").read_text() == "# my notes\n"
    assert any(str(ws) in s for s in written.skipped) and any("INDEX.md" in s for s in written.skipped)
    index = json.loads((cards_copy / "index.json").read_text())
    assert index["generated_files"][f"proposed/{ws.name}"] != hashlib.sha256(ws.read_bytes()).hexdigest()


def test_an_unedited_generated_file_is_refreshed(cards_copy, tmp_path):
    out = tmp_path / "out"
    write_outputs(synthesize(read_history(HISTORY), load_cards(cards_copy)), out, cards_copy)
    rounds = read_history(HISTORY)
    rounds[9].description += " and pin 2 consumer warpgroups"  # the matmul round, now described differently
    result = synthesize(rounds, load_cards(cards_copy))
    written = write_outputs(result, out, cards_copy)
    path = out / "proposed" / f"{result.assignments[9].proposal}.md"
    assert path in written.files and "consumer warpgroups" in path.read_text() and not written.skipped


# --- LLM path: a real HTTP server on loopback speaking the chat-completions protocol --------------------------


class ScriptedChat(BaseHTTPRequestHandler):
    replies: ClassVar[list[str]] = []  # scripted answers, in order
    requests: ClassVar[list[dict]] = []  # what the server received

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        content = type(self).replies.pop(0)
        reply = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def chat_server():
    ScriptedChat.replies, ScriptedChat.requests = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedChat)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_llm_assisted_synthesis(chat_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loopback")
    rounds = read_history(HISTORY)
    weak = [rounds[5], rounds[9], rounds[10]]  # keywords-only, and the two rounds no card explains
    ScriptedChat.replies = [
        '{"card": "cache-hints", "family": "cache-control", "confidence": 0.9, '
        '"interpretation": "An L2 residency hint on the first pass; no gain because the rows exceed L2."}',
        "```json\n"
        + json.dumps(
            {
                "card": None,
                "family": "warp-specialization",
                "confidence": 0.8,
                "interpretation": "Producer/consumer warp specialization of the K loop.",
                "new_card": {
                    "title": "Warp-specialize TMA-fed dot loops",
                    "family": "warp-specialization",
                    "summary": "Split the K loop into producer and consumer warps.",
                    "rewrite": "for k in tl.range(0, n, warp_specialize=True): …",
                    "symptoms": [
                        {
                            "when": "ttgir.mem.tma >= 1 and ttgir.control.warp_specialize == 0",
                            "why": "TMA loads without warp specialization",
                        }
                    ],
                },
            }
        )
        + "\n```",
        "I think this is about rsqrt.",  # not JSON: the rule-based proposal stands
    ]
    llm = LLMConfig.from_args("scripted-model", chat_server)
    result = synthesize(weak, load_cards(CARDS_DIR), llm)
    a_cache, a_ws, a_rms = result.assignments
    assert [(f.card, f.method, f.confidence) for f in a_cache.families] == [("cache-hints", "llm", 0.63)]
    assert "L2 residency hint" in a_cache.interpretation
    doc = result.proposals[a_ws.proposal]
    assert doc["title"] == "Warp-specialize TMA-fed dot loops" and doc["family"] == "warp-specialization"
    assert doc["symptoms"][0]["when"] == "ttgir.mem.tma >= 1 and ttgir.control.warp_specialize == 0"
    assert a_ws.families[0].method == "llm"
    assert a_rms.proposal and a_rms.families[0].method == "proposed"
    assert any("not a JSON object" in n for n in a_rms.notes)
    # what the server saw: the protocol, the key, the model, the catalog and the round
    assert len(ScriptedChat.requests) == 3
    first = ScriptedChat.requests[0]
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer sk-test-loopback"
    assert first["model"] == "scripted-model" and first["messages"][0]["role"] == "system"
    assert "index-free-top2 | index-reduction" in first["messages"][1]["content"]
    assert "evict_last" in first["messages"][1]["content"]


def test_llm_answers_are_validated(chat_server, monkeypatch):
    rounds = read_history(HISTORY)
    ScriptedChat.replies = [
        '{"card": "no-such-card", "family": "x", "confidence": 1}',
        json.dumps(
            {
                "card": None,
                "family": "f",
                "new_card": {
                    "title": "T1 title",
                    "family": "bad family!",
                    "summary": "s",
                    "symptoms": [{"when": "gpu.x > 1", "why": "made up"}],
                },
            }
        ),
    ]
    result = synthesize([rounds[9], rounds[10]], load_cards(CARDS_DIR), LLMConfig.from_args("m", chat_server))
    first, second = result.assignments
    assert any("not in the catalog" in n for n in first.notes) and first.families[0].method == "proposed"
    assert any("llm symptoms rejected" in n for n in second.notes)
    doc = result.proposals[second.proposal]
    assert doc["family"] != "bad family!" and all("gpu." not in s["when"] for s in doc["symptoms"])
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        LLMConfig.from_args("m", None)
    assert LLMConfig.from_args(None) is None


# --- history format errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "not JSON"),
        ('["a list"]', "must be a JSON object"),
        ('{"op": "x", "round": 1, "description": "d"}', "missing required field(s) decision"),
        ('{"op": "x", "round": 1, "description": "d", "decision": "maybe"}', "'decision' must be one of"),
        ('{"op": "x", "round": "1", "description": "d", "decision": "accepted"}', "'round' must be an integer"),
        ('{"op": "x", "round": 1, "description": "d", "decision": "accepted", "speed": 2}', "unknown field(s) speed"),
        ('{"op": "x", "round": 1, "description": "d", "decision": "accepted", "speedup": -1}', "positive number"),
        (
            '{"op": "x", "round": 1, "description": "d", "decision": "accepted", "evidence": {"gpu.x": 1}}',
            "no known namespace",
        ),
        ('{"format": "other", "op": "x", "round": 1, "description": "d", "decision": "accepted"}', "this reader takes"),
        ('{"format_version": 3, "op": "x", "round": 1, "description": "d", "decision": "accepted"}', "v1 and v2"),
        (
            '{"op": "x", "round": 1, "description": "d", "decision": "accepted", "base_round": "0"}',
            "an integer or null",
        ),
        ('{"op": "x", "round": 1, "description": "d", "decision": "accepted", "citations": {}}', "a list or null"),
    ],
)
def test_history_errors_name_file_and_line(tmp_path, line, message):
    good = HISTORY.read_text().splitlines()[0]
    path = tmp_path / "h.jsonl"
    path.write_text(good + "\n\n" + line + "\n")
    with pytest.raises(HistoryFileError) as e:
        read_history(path)
    assert message in str(e.value) and f"{path}:3" in str(e.value)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(HistoryFileError, match="no rounds"):
        read_history(empty)


def test_the_ladders_family_names_are_aliases_of_card_families():
    rounds = read_history(HISTORY)
    layer_norm = next(r for r in rounds if r.op == "layer_norm")
    assert layer_norm.family == "split-work-across-programs"  # the ladder's name, exported as is
    result = synthesize([layer_norm], load_cards(CARDS_DIR))
    (fam,) = result.assignments[0].families
    assert (fam.family, fam.card, fam.method) == ("parallel-reduction", "split-row-reduction", "declared-family")
    vague = layer_norm.__class__(
        op="x", round=1, description="made it faster", decision="accepted", family="fuse-passes"
    )
    a = synthesize([vague], load_cards(CARDS_DIR)).assignments[0]
    assert any("spans" in n for n in a.notes) and a.families[0].method == "proposed"


def test_rounds_that_tried_no_rewrite_are_read_and_teach_nothing(tmp_path):
    """A ladder run's export holds every round; synthesis maps the rewrite verdicts and skips the rest."""
    learned = HISTORY.read_text().splitlines()[0]
    account = {"base_round": 0, "reason": "the frozen initial kernel", "citations": [], "usage": {}, "next": "L1"}
    baseline = {"format_version": 2, "op": "softmax", "round": 0, "description": "initial", "decision": "baseline"}
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps({**baseline, **account}) + "\n" + learned + "\n")
    first, second = read_history(path)
    assert (first.decision, first.learnable, first.reason, first.base_round) == (
        "baseline",
        False,
        "the frozen initial kernel",
        0,
    )
    assert second.learnable and second.reason is None, "a version 1 line has no account of the round"
    result = synthesize([first, second], load_cards(CARDS_DIR))
    assert [a.round for a in result.assignments] == [second]
    assert read_history(path)[0].to_line()["next"] == "L1"
