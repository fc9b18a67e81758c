"""`source_mappings` as tritonparse's viewer reads them, from irscope's own line attribution.

Per stage: `{"<ir line>": {"file", "line", "column", "<stage>_line", "<other>_lines": [...]}}`; and `python`:
`{"<kernel line>": {"<stage>_lines": ["<ir line>", …]}}`. tritonparse's parser keys lines by `file:line:column`
of the innermost location, so code inlined from `tl.*` helpers maps to the helper's line in
triton/language/*.py; irscope attributes every IR line to the kernel line it came from (call-site locations,
DWARF inlining, PTX and SASS through the MLIR call sites: irscope/report/irlines.py), the same attribution its
per-line counters use. So the mapping is by kernel line: `column` is 0, and a line of one stage points at every
line of another stage that came from the same kernel line. tritonparse's parser recomputes the mappings its own
way when it parses the file.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from irscope.report.irlines import source_lines
from irscope.signatures.engine import LineResolver


def source_mappings(
    stages: dict[str, tuple[str, str]], kernel_file: str, resolver: LineResolver
) -> dict[str, dict[str, Any]]:
    """`stages`: tritonparse stage name → (snapshot kind, text), in pipeline order; `sass` has kind "sass".
    `resolver`: the trajectory's own (`signatures.Analyzer(traj).resolver`), which its per-line counters use."""
    # stage → kernel line → IR lines (1-based)
    by_line: dict[str, dict[int, list[int]]] = {}
    for name, (kind, text) in stages.items():
        lines: dict[int, list[int]] = defaultdict(list)
        for i, line in enumerate(source_lines(kind, text, kernel_file, resolver), start=1):
            if line > 0:
                lines[line].append(i)
        by_line[name] = lines
    out: dict[str, dict[str, Any]] = {}
    for name, lines in by_line.items():
        entries: dict[str, Any] = {}
        for line, ir_lines in lines.items():
            links = {f"{o}_lines": by_line[o][line] for o in by_line if o != name and line in by_line[o]}
            for i in ir_lines:
                entries[str(i)] = {"file": kernel_file, "line": line, "column": 0, f"{name}_line": i, **links}
        out[name] = dict(sorted(entries.items(), key=lambda kv: int(kv[0])))
    python: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for name, lines in by_line.items():
        for line, ir_lines in lines.items():
            python[str(line)][f"{name}_lines"] = [str(i) for i in ir_lines]
    out["python"] = dict(sorted(python.items(), key=lambda kv: int(kv[0])))
    return out
