"""`ladder` on damaged or mistaken input: a resumed run over a damaged record, an --out that is a file."""

import sqlite3

import pytest

from ladder.cli import main
from ladder.records import History
from tests.ladder.test_records import baseline


def test_resuming_over_an_unreadable_record_is_a_clear_error_and_keeps_the_history(tmp_path, capsys):
    with History(tmp_path) as h:
        h.commit(baseline())
    con = sqlite3.connect(tmp_path / "history.sqlite")
    con.execute("UPDATE rounds SET record = '{\"op\": 1}'")
    con.commit()
    con.close()
    before = (tmp_path / "history.sqlite").read_bytes()
    args = ["optimize", "moe_group_top2", "--offline", "--validator", "interpret", "--rounds", "2", "--quiet"]
    assert main([*args, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ladder: {tmp_path / 'history.sqlite'}: the record of moe_group_top2 round 0 is unreadable")
    assert err.rstrip().endswith("the run cannot resume past it: give a new --out (this history is left as it is)")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "history.sqlite").read_bytes() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["optimize", "new_gelu", "--offline"], "--out {out} is a file: give a run directory"),
        (["suite", "--ops", "new_gelu", "--offline"], "--out {out} is a file: give a run directory"),
        (["bench", "--ops", "new_gelu"], "--out {out} is a file: give a directory for bench.json and bench.png"),
        (["diagnose", "new_gelu"], "--out {out} is a file: give a directory for the levels' artifacts"),
    ],
)
def test_an_out_that_is_a_file_is_refused(args, message, tmp_path, capsys):
    out = tmp_path / "notes.txt"
    out.write_text("mine")
    assert main([*args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message.format(out=out) in " ".join(err.split()) and "Traceback" not in err
    assert out.read_text() == "mine"
