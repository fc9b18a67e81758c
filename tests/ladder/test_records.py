"""Round records and the SQLite history: round trips, atomic commits, best round, schema versions, JSONL."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from ladder import round_lines
from ladder.context import Context, operator_context
from ladder.evidence import ARTIFACT, RAN, Evidence, Hypothesis, LevelResult, RewriteFamily, SourceRef
from ladder.policy import climb
from ladder.records import (
    ACCEPTED,
    BASELINE,
    REJECTED,
    SCHEMA_VERSION,
    UNTIMED,
    Attempt,
    History,
    HistoryError,
    Rewrite,
    Round,
)
from ladder.validation import CaseResult, Validation, speedup
from patterns.history import read_history
from suite.operator import get_operator
from tests.ladder import candidates, h200

DOCS = Path(__file__).resolve().parents[2] / "docs" / "ladder.md"
OP = get_operator("new_gelu")


def moe(times: tuple[float, ...]) -> Validation:
    return h200.timed(tuple(zip(times, h200.MOE_SOL)))


def full_round(tmp_path: Path) -> Round:
    ref = SourceRef(ARTIFACT, str(tmp_path / "round-000" / "validation.json"))
    ev = (
        Evidence(
            "L2.ncu.c3",
            "L2",
            "c3: 8.4M programs of 32 elements",
            SourceRef(ARTIFACT, "ncu-c3.ncu-rep"),
            ("c3",),
            {"grid": 8388608},
        ),
    )
    l2 = LevelResult(
        "L2",
        RAN,
        evidence=ev,
        hypotheses=(Hypothesis("latency-bound", "kernel k", (), ("L2.ncu.c3",)),),
        families=(RewriteFamily("more-work-per-program", "block tokens", ("L2.ncu.c3",)),),
    )

    class L2:
        name = "L2"

        def run(self, ctx: Context) -> LevelResult:
            from ladder.policy import assess

            return assess(l2, ctx)

    diag = climb(operator_context(OP, OP.kernel_path, tmp_path, 1, moe(h200.MOE_NAIVE), ref), {"L2": L2()})
    rw = Rewrite(
        "llm:m",
        "more-work-per-program",
        "block 8 tokens per program",
        candidates.VALID,
        "--- a\n+++ b\n",
        (
            Attempt("no ```python code block", {"total_tokens": 10}, "stop"),
            Attempt(None, {"total_tokens": 1200, "prompt_tokens": 900}, "stop"),
        ),
    )
    v = moe(h200.MOE_BLOCKED)
    gain = speedup(moe(h200.MOE_NAIVE).times(), v.times())
    return Round(
        "moe_group_top2",
        1,
        0,
        ACCEPTED,
        f"{gain:.3g}x faster than round 0",
        "re-diagnose",
        "80% of speed of light on every case",
        diag,
        rw,
        v,
        gain,
        gain,
        {"candidate": str(tmp_path / "candidate.py")},
        "2026-01-01T00:00:00+00:00",
        "2026-01-01T00:01:00+00:00",
    )


def baseline(op: str = "moe_group_top2", v: Validation | None = None) -> Round:
    v = v or moe(h200.MOE_NAIVE)
    return Round(
        op,
        0,
        0,
        BASELINE,
        "the frozen initial kernel",
        validation=v,
        speedup=1.0 if v.timed else None,
        speedup_initial=1.0 if v.timed else None,
    )


def test_a_round_survives_json_and_sqlite_intact(tmp_path):
    r = full_round(tmp_path)
    assert r.diagnosis.level == "L2" and r.level == "L2"
    assert r.speedup == pytest.approx(16.0, rel=0.05)  # docs/suite.md#case-study-moe-group-top-2: naive → blocked 16x
    assert Round.from_json(json.loads(json.dumps(r.to_json()))) == r
    with History(tmp_path) as h:
        h.commit(baseline())
        h.commit(r)
    with History(tmp_path / "history.sqlite") as h:
        assert h.get("moe_group_top2", 1) == r
        assert [x.round for x in h.rounds("moe_group_top2")] == [0, 1]
        assert h.ops() == ["moe_group_top2"] and h.next_round("moe_group_top2") == 2 and h.next_round("x") == 0
    assert r.rewrite.usage == {"total_tokens": 1210, "prompt_tokens": 900}


def test_the_store_is_wal_and_schema_versioned(tmp_path):
    History(tmp_path).close()
    db = sqlite3.connect(tmp_path / "history.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_round_is_recorded_once(tmp_path):
    with History(tmp_path) as h:
        h.commit(baseline())
        with pytest.raises(HistoryError, match="moe_group_top2 round 0 is already recorded"):
            h.commit(replace(baseline(), reason="again"))
        assert h.get("moe_group_top2", 0).reason == "the frozen initial kernel"
        assert len(h.rounds()) == 1


def test_best_is_the_highest_validated_speedup_of_a_kept_kernel_earliest_on_ties(tmp_path):
    naive = h200.MOE_NAIVE
    half = tuple(t / 2 for t in naive)

    def rnd(n: int, times: tuple[float, ...] | None, decision: str) -> Round:
        v = moe(times) if times else Validation("interpret", "cpu", True, "ok", (CaseResult("s1", True),))
        g = speedup(moe(naive).times(), v.times()) if v.timed else None
        return Round("moe_group_top2", n, 0, decision, "r", validation=v, speedup=g, speedup_initial=g)

    with History(tmp_path) as h:
        h.commit(baseline())
        assert h.best("moe_group_top2").round == 0
        h.commit(rnd(1, half, ACCEPTED))
        h.commit(rnd(2, None, UNTIMED))
        h.commit(rnd(3, half, REJECTED))  # as fast as round 1: the earlier round stays best
        h.commit(rnd(4, tuple(t * 2 for t in naive), REJECTED))
        h.commit(rnd(5, tuple(t / 2.01 for t in naive), REJECTED))  # faster, but rejected (within the noise margin)
        best = h.best("moe_group_top2")
        assert best.round == 1 and best.speedup_initial == pytest.approx(2.0)
        assert h.best("unknown") is None


def test_no_best_without_timings(tmp_path):
    cpu = Validation("interpret", "cpu (TRITON_INTERPRET=1)", True, "ok", (CaseResult("s1", True),))
    with History(tmp_path) as h:
        h.commit(baseline("new_gelu", cpu))
        assert h.best("new_gelu") is None


def test_newer_schemas_foreign_databases_and_garbage_are_refused(tmp_path):
    newer = tmp_path / "newer"
    History(newer).close()
    sqlite3.connect(newer / "history.sqlite").execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    with pytest.raises(HistoryError, match=f"schema {SCHEMA_VERSION + 1}; this ladder reads up to {SCHEMA_VERSION}"):
        History(newer)
    foreign = tmp_path / "foreign.sqlite"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(HistoryError, match="not a ladder history"):
        History(foreign)
    garbage = tmp_path / "garbage" / "history.sqlite"
    garbage.parent.mkdir()
    garbage.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(HistoryError, match="not a readable ladder history"):
        History(garbage)


def test_an_unreadable_record_names_its_round(tmp_path):
    with History(tmp_path) as h:
        h.commit(baseline())
    con = sqlite3.connect(tmp_path / "history.sqlite")
    con.execute("UPDATE rounds SET record = '{\"op\": 1}'")
    con.commit()
    con.close()
    with History(tmp_path) as h, pytest.raises(HistoryError, match="record of moe_group_top2 round 0 is unreadable"):
        h.rounds()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"round": 1, "decision": "maybe"}, "not one of"),
        ({"round": 2, "decision": BASELINE}, "only round 0 is the baseline"),
        ({"round": 0, "decision": ACCEPTED}, "only round 0 is the baseline"),
        ({"round": 1, "decision": ACCEPTED, "speedup_initial": 2.0}, "without a correct, timed validation"),
    ],
)
def test_inconsistent_rounds_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Round(op="x", base_round=0, reason="r", **kwargs)


def test_the_export_carries_the_ladders_account_of_each_round(tmp_path):
    with History(tmp_path) as h:
        h.commit(baseline())
        h.commit(full_round(tmp_path))
        assert round_lines.export(h, tmp_path / "rounds.jsonl") == 2
    lines = [json.loads(x) for x in (tmp_path / "rounds.jsonl").read_text().splitlines()]
    line = lines[1]
    assert line["op"] == "moe_group_top2" and line["round"] == 1 and line["decision"] == ACCEPTED
    assert line["family"] == "more-work-per-program" and line["description"] == "block 8 tokens per program"
    assert line["candidate_source"] == candidates.VALID and line["diff"].startswith("--- a")
    assert line["speedup_vs_initial"] == pytest.approx(16.0, rel=0.05) and line["correct"] is True
    assert line["level"] == "L2" and line["hypothesis"]["bottleneck"] == "latency-bound"
    assert line["citations"][0] == {
        "id": "L2.ncu.c3",
        "level": "L2",
        "claim": "c3: 8.4M programs of 32 elements",
        "source": "ncu-c3.ncu-rep",
    }
    assert [x["level"] for x in line["escalations"]] == ["L1"]
    assert line["usage"]["total_tokens"] == 1210
    assert lines[0]["decision"] == BASELINE and lines[0]["candidate_source"] is None
    assert read_history(tmp_path / "rounds.jsonl")[1].citations == line["citations"], "its reader takes it back"
    section = DOCS.read_text().split("## JSONL export")[1].split("\n## ")[0]
    documented = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    assert set(line) == documented, f"fields and docs differ: {set(line) ^ documented}"


def _open_history(path: str, barrier) -> None:
    barrier.wait()
    History(path).close()


def test_jobs_that_open_a_new_history_at_once_all_get_one_schema(tmp_path):
    """`--jobs N` opens one history from N workers: the first creates the schema, the others wait and find it
    (before: "table meta already exists", or "database is locked" while switching to WAL)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    for trial in range(8):
        path = tmp_path / f"h{trial}.sqlite"
        barrier = ctx.Barrier(4)
        procs = [ctx.Process(target=_open_history, args=(str(path), barrier)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0, 0, 0, 0]
        with History(path) as h:
            assert h._db.execute("SELECT value FROM meta WHERE key='format'").fetchone() == ("ladder-history",)
