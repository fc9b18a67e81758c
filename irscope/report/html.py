"""One self-contained HTML file: pass list with deltas, any pass's IR beside its predecessor with the changes
highlighted, the Python source with per-line counters, counter timelines. No network access needed: data is
embedded (IR texts gzip-compressed, inflated by the browser's DecompressionStream)."""

from __future__ import annotations

import base64
import difflib
import gzip
import html
import json
import re
from pathlib import Path

from irscope.report.model import ReportModel

TEMPLATE = Path(__file__).with_name("page.html")
DIFF_LINE_LIMIT = 3000  # above this, difflib's cost grows too fast for a report; shown side by side instead


# A pass that inserts one op renumbers every later SSA value (%x_4 → %x_7) and location alias; diffing the
# lines with those numbers blanked shows the ops that changed, not the renumbering.
_RENUMBERED = re.compile(r"(%[A-Za-z_][\w$.-]*?)_\d+\b|%\d+\b|(#loc)\d+\b")


def normalize(line: str) -> str:
    return _RENUMBERED.sub(lambda m: m.group(1) or m.group(2) or "%N", line)


def _diff_opcodes(a: str, b: str) -> list[list] | None:
    la, lb = a.splitlines(), b.splitlines()
    if len(la) > DIFF_LINE_LIMIT or len(lb) > DIFF_LINE_LIMIT:
        return None
    na, nb = [normalize(x) for x in la], [normalize(x) for x in lb]
    return [list(op) for op in difflib.SequenceMatcher(a=na, b=nb, autojunk=False).get_opcodes()]


def _gz(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode(), compresslevel=6)).decode()


def page_data(model: ReportModel, focus: str | None = None) -> dict:
    t, g = model.traj, model.graph
    nodes = g.nodes()
    edges = []
    for e in g.edges():
        edges.append(
            {
                "source": e.source,
                "target": e.target,
                "stage": e.stage,
                "pass_arg": e.pass_arg,
                "ops_added": e.ops_added,
                "ops_removed": e.ops_removed,
                "counter_deltas": e.counter_deltas,
                "collapsed": e.collapsed,
                "focus": bool(focus and focus in (e.pass_arg, str(e.target))),
            }
        )
    diffs = {}
    for e in g.edges():
        a, b = t.snapshots[e.source], t.snapshots[e.target]
        diffs[e.target] = None if e.kind_change else _diff_opcodes(a.text, b.text)
    timelines = {}
    for name in model.key_counters:
        series = g.timeline(name)
        if any(v for _, _, v in series):
            timelines[name] = [[i, label, v] for i, label, v in series]
    timelines = {k: [[i, v, label] for i, label, v in s] for k, s in timelines.items()}
    stage_starts, seen = [], set()
    for s in t.snapshots:
        if s.stage not in seen:
            seen.add(s.stage)
            stage_starts.append([s.stage, s.index])
    return {
        "meta": {
            "kernel": t.kernel.name,
            "target": str(t.target),
            "source_file": t.kernel.source_file,
            "first_line": t.kernel.first_line,
            "last_line": t.kernel.last_line,
            "triton": t.versions.get("triton", "?"),
            "resources": {k: v for k, v in t.resources.items() if not isinstance(v, str)},
            "error": (t.error.message.splitlines()[0] if t.error and t.error.message else None),
        },
        "snapshots": [
            {"index": s.index, "stage": s.stage, "pass_arg": s.pass_arg, "pass_name": s.pass_name, "changed": s.changed}
            for s in t.snapshots
        ],
        "edges": edges,
        "diffs": diffs,
        "texts": {i: _gz(t.snapshots[i].text) for i in nodes},
        "source": t.kernel.source.splitlines(),
        "lines": {st: {str(k): v for k, v in lines.items() if k} for st, lines in model.lines.items()},
        "timelines": timelines,
        "stage_starts": stage_starts,
    }


# In JSON embedded in a <script> element, `<` could close the element (`</script>`) or open a comment state
# (`<!--<script>` swallows the rest of the page); `>` and `&` are escaped alike. ensure_ascii turns U+2028/2029
# (line terminators to older JavaScript parsers) into \u escapes. JSON has these characters only inside strings,
# where \u escapes mean the same.
_SCRIPT_UNSAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def script_json(data: object) -> str:
    """JSON that can sit inside `<script type="application/json">` whatever strings it carries."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=True).translate(_SCRIPT_UNSAFE)


def fill(template: str, values: dict[str, str]) -> str:
    """Substitute `__NAME__` placeholders in one pass, so a value that contains another placeholder's name (a
    kernel called `__DATA__`) is left as it is."""
    return re.sub(r"__([A-Z_]+?)__", lambda m: values.get(m.group(1), m.group(0)), template)


def render(model: ReportModel, focus: str | None = None) -> str:
    title = f"{model.traj.kernel.name} → {model.traj.target}"
    return fill(TEMPLATE.read_text(), {"TITLE": html.escape(title), "DATA": script_json(page_data(model, focus))})
