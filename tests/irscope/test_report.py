"""Reports: the CLI commands on a real dump, the Markdown report, and the HTML report in a real headless
browser (Debian's chromium): it loads with no console output at all, its script finishes, and a screenshot
is taken."""

import re
import subprocess

import pytest

from irscope.cli import main as cli_main
from tests.irscope import browser
from tests.irscope.browser import CHROMIUM, FLAGS


@pytest.fixture(scope="module")
def argmax_dump(tmp_path_factory):
    out = tmp_path_factory.mktemp("argmax")
    assert cli_main(["dump", "--example", "top2_argmax", "--out", str(out)]) == 0
    return out


def test_show_query_and_markdown(argmax_dump, tmp_path, capsys):
    assert cli_main(["show", str(argmax_dump)]) == 0
    out = capsys.readouterr().out
    assert "tritongpu-coalesce" in out and "sync.shuffle" in out and "tl.argmax" in out
    assert cli_main(["query", str(argmax_dump), "introduced-by", "ttg.convert_layout"]) == 0
    assert "tritongpu-coalesce" in capsys.readouterr().out
    assert cli_main(["query", str(argmax_dump), "removed-by", "tt.dot"]) == 1  # there is no dot
    assert cli_main(["query", str(argmax_dump), "first", "sync.shuffle >"]) == 2  # malformed predicate
    md = tmp_path / "r.md"
    assert cli_main(["report", str(argmax_dump), "-o", str(md)]) == 0
    text = md.read_text()
    for section in ("## Resources", "## Passes that changed the IR", "## Key counters", "## Source lines"):
        assert section in text
    # 128 elements over 4 warps: 5 butterfly steps across a warp's 32 lanes, 2 across the 4 warps' partials, each
    # moving a value and an index: 2 × (5 + 2) = 14 PTX shuffles (the plain tl.max on line 37 has 7)
    assert re.search(r"\| 38 \| `i1 = tl.argmax\(x, axis=0\)` \|.*sync.shuffle=14", text)
    # the plain max's 5 + 2 = 7 PTX shuffles stay on its own line, though the tl.max helper lines they come from
    # are line 40's too
    assert re.search(r"\| 37 \| `first = tl.max\(x, axis=0\)` \|.*ptx: sync.shuffle=7\b", text)


def test_diff_command(argmax_dump, tmp_path, capsys):
    value = tmp_path / "value"
    assert cli_main(["dump", "--example", "top2_value", "--out", str(value)]) == 0
    capsys.readouterr()
    assert cli_main(["diff", str(argmax_dump), str(value)]) == 0
    out = capsys.readouterr().out
    assert "ttgir.compute.reduce_index" in out and "tl.argmax" in out


@pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed (make test installs it as root)")
def test_html_report_in_headless_chromium(argmax_dump, tmp_path):
    page = tmp_path / "report.html"
    assert cli_main(["report", str(argmax_dump), "-o", str(page), "--focus", "tritongpu-coalesce"]) == 0
    html = page.read_text()
    assert "http://" not in html and "https://" not in html, "the report must not reach the network"
    loaded = browser.load(page, tmp_path)
    console = loaded.console
    assert console == [], f"console output: {console}"
    dom = loaded.dom
    assert 'data-ready="1"' in dom, "the page script did not finish"
    assert dom.count('class="changed"') + dom.count('class="changed sel"') >= 10  # pass rows with effects
    assert 'class="c del' in dom and 'class="c add' in dom  # coalesce's diff is highlighted
    assert "ttg.convert_layout" in dom
    shot = tmp_path / "report.png"
    subprocess.run(
        [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=10000",
            "--window-size=1400,900",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
