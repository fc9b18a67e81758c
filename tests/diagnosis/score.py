"""Score the ladder's diagnosis on the evaluation set (cases.yaml): kernels with a known root cause it has never
seen, and healthy kernels it must not blame.

    python -m tests.diagnosis.score [--set cases|holdout|unseen|fresh|all] [--index out/compiler-index.db]
                                    [--only NAME …] [--json out/score.json]

cases.yaml is the set the rules were developed against; holdout.yaml was written afterwards, by someone who had
not read the rules, and is the honest measure of kernels the ladder has never seen; unseen.yaml likewise (issue
#27), with root causes outside docs/hazards.md's symptoms named `new:…` until the ladder has them.

Each case is diagnosed as a user would (`ladder.api.run` on FILE.py:KERNEL with its specialization, through L4)
and earns up to three points:
  symptom  L3's costliest hazard is the expected symptom (healthy kernels: L3 reports no hazard at all);
  l4       L4 cites the expected function in the expected file of Triton's source for that symptom;
  family   the final verdict names the fix: the family the ladder settled on (the one rewrite it proposes) is the
           expected card family; an inconclusive verdict, or one for another symptom, earns nothing, whatever
           family a level settled for the expected symptom on the way (issue #27).
A healthy kernel earns all three when nothing is blamed, none otherwise. Without a compiler index L4 cannot run:
its points are reported as unavailable and left out of the total (the score says so).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ladder.api import KernelDiagnosis, run
from ladder.evidence import COMPILER_SOURCE, Evidence, LevelResult
from ladder.kernel_spec import KernelSpec
from tests.diagnosis.cases import CASES_FILE, FRESH_FILE, HERE, HOLDOUT_FILE, NONE, UNSEEN_FILE, Case, load_cases

SETS = {"cases": CASES_FILE, "holdout": HOLDOUT_FILE, "unseen": UNSEEN_FILE, "fresh": FRESH_FILE}


@dataclass
class Scored:
    case: str
    expected: str
    got: list[str]  # L3's hazards, costliest first
    symptom: bool
    l4: bool | None  # None: L4 did not run (no index)
    family: bool
    seconds: float
    cited: list[str] = field(default_factory=list)  # L4's file:function citations for the expected symptom
    families: list[str] = field(default_factory=list)  # settled for the expected symptom, by L4 or else L3
    verdict: str | None = None  # the family of the final verdict (None: inconclusive)

    @property
    def points(self) -> int:
        return int(self.symptom) + int(bool(self.l4)) + int(self.family)

    @property
    def possible(self) -> int:
        return 3 if self.l4 is not None or self.expected == NONE else 2


def spec_of(case: Case) -> KernelSpec:
    path, _, name = case.kernel.rpartition(":")
    options = {**case.constexprs, "num_warps": case.num_warps, "num_stages": case.num_stages}
    return KernelSpec.from_ref(f"{HERE / path}:{name}", case.args, options, case.target)


def _matches(e: Evidence, file: str, function: str) -> bool:
    if e.source.kind != COMPILER_SOURCE or e.source.path != file:
        return False
    symbol = e.source.symbol or ""
    names = {symbol, symbol.split("::")[-1]}
    return function in names or function.split("::")[-1] in names or function in e.claim


def _for(result: LevelResult | None, symptom: str) -> tuple[list[Evidence], list[str]]:
    """The evidence a level gives for one symptom's hypothesis, and the families it settled for it."""
    if result is None:
        return [], []
    ev = result.evidence_by_id()
    cited = [ev[i] for h in result.hypotheses if h.bottleneck == symptom for i in h.evidence if i in ev]
    ids = {e.id for e in cited}
    return cited, [f.name for f in result.families if ids & set(f.evidence)]


def score(case: Case, d: KernelDiagnosis, seconds: float, set_name: str = "cases") -> Scored:
    got = [f.hazard.symptom for f in d.findings]
    exp = case.expect
    if exp.symptom == NONE:
        clean = not got
        return Scored(f"{set_name}/{case.id}", NONE, got, clean, clean, clean, seconds)
    l4 = d.level("L4")
    l4_ran = l4 is not None and l4.status == "ran"
    cited, families = _for(l4 if l4_ran else None, exp.symptom)
    if not families:
        families = _for(d.level("L3"), exp.symptom)[1]
    wanted = exp.l4 or {}
    l4_ok = any(_matches(e, wanted.get("file", ""), wanted.get("function", "")) for e in cited) if l4_ran else None
    verdict = d.diagnosis.family.name if d.diagnosis.family is not None else None
    return Scored(
        f"{set_name}/{case.id}",
        exp.symptom,
        got,
        bool(got) and got[0] == exp.symptom,
        l4_ok,
        verdict == exp.family,
        seconds,
        [
            f"{e.source.path}:{e.source.line} {e.source.symbol or ''}".strip()
            for e in cited
            if e.source.kind == COMPILER_SOURCE
        ],
        families,
        verdict,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.diagnosis.score", description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, help="compiler index for L4 (default: the ladder's, out/compiler-index.db)")
    ap.add_argument("--set", choices=sorted(SETS), default="all", help="which evaluation set (default: all)")
    ap.add_argument("--only", nargs="*", help="case ids (or parts of them) to score")
    ap.add_argument("--out", type=Path, default=Path("out") / "diagnosis-score", help="work directory")
    ap.add_argument("--json", type=Path, help="write every case's result here")
    a = ap.parse_args(argv)
    sets = [(name, path) for name, path in SETS.items() if a.set in (name, "all")]
    cases = [(name, c) for name, path in sets for c in load_cases(path) if not a.only or any(o in c.id for o in a.only)]
    rows: list[Scored] = []
    for name, case in cases:
        started = time.monotonic()
        d = run(spec_of(case), through="L4", index=a.index, workdir=a.out / name / case.id)
        rows.append(score(case, d, time.monotonic() - started, name))
        r = rows[-1]
        mark = {True: "✓", False: "✗", None: "–"}
        print(
            f"{r.case:<52} {r.expected:<22} got {','.join(r.got[:2]) or 'nothing':<44} "
            f"symptom {mark[r.symptom]} l4 {mark[r.l4]} family {mark[r.family]} (verdict {r.verdict or 'no rewrite'})"
            f"  {r.seconds:.1f} s",
            flush=True,
        )
    for name, _ in sets:
        mine = [r for r in rows if r.case.startswith(name + "/")]
        if mine:
            got, of = sum(r.points for r in mine), sum(r.possible for r in mine)
            print(f"{name}: {got}/{of} = {got / of:.0%} over {len(mine)} cases")
    points, possible = sum(r.points for r in rows), sum(r.possible for r in rows)
    no_l4 = sum(1 for r in rows if r.l4 is None and r.expected != NONE)
    print(
        f"score {points}/{possible} = {points / possible:.0%} over {len(rows)} cases"
        + (f" (L4 unavailable for {no_l4}: no compiler index)" if no_l4 else "")
    )
    print(f"median {sorted(r.seconds for r in rows)[len(rows) // 2]:.1f} s per case")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(
            json.dumps({"points": points, "possible": possible, "cases": [asdict(r) for r in rows]}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
