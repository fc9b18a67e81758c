"""Debian's headless chromium as the tests drive it: load a page, optionally run a script that interacts with
it after the page's own script finished (it writes its findings as JSON into <pre id="testresult">), and read
back the DOM and the console."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = shutil.which("chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Waits for the page's `data-ready`, runs the test's steps (an async function body with `R` to fill in, and
# `until(f)` to wait for a condition), then writes R into the DOM.
_HARNESS = """<script>
(async () => {
  const until = async f => {
    for (let i = 0; i < 400 && !f(); i++) await new Promise(r => setTimeout(r, 25));
    return f();
  };
  const R = {};
  try {
    await until(() => document.body.dataset.ready === "1");
    R.ready_ms = performance.now();
    %s
  } catch (e) { R.error = String(e && e.stack || e); }
  const pre = document.createElement("pre");
  pre.id = "testresult";
  pre.textContent = JSON.stringify(R);
  document.body.appendChild(pre);
})();
</script>"""


@dataclass
class Loaded:
    dom: str
    console: list[str]
    result: dict
    wall_s: float  # chromium's whole run, its start (about 2 s here) included; page timers run on virtual time


def load(page: Path, tmp: Path, steps: str | None = None) -> Loaded:
    """Load `page` (a copy with the test's steps when given) and return the DOM, console lines and results."""
    assert CHROMIUM is not None
    if steps is not None:
        copy = tmp / f"{page.stem}-test.html"
        text = page.read_text()
        at = text.rindex("</body>")
        copy.write_text(text[:at] + _HARNESS % steps + text[at:])
        page = copy
    start = time.monotonic()
    run = subprocess.run(
        [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={tmp / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=30000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    m = re.search(r'<pre id="testresult">(.*?)</pre>', run.stdout, re.S)
    result = json.loads(html.unescape(m.group(1))) if m else {}
    return Loaded(run.stdout, console, result, time.monotonic() - start)
