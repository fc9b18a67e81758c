"""`make mutation`: mutmut over the modules where a silent mistake costs most, one group at a time.

    python tools/mutation.py [GROUP ...] [--list] [--keep | --retest | --report]

Each group (GROUPS below; add one to extend the run) names the files mutmut mutates and the tests that exist to
catch mistakes in them. A group runs in its own folder, out/mutation/GROUP/: a pyproject.toml that is the
project's plus a `[tool.mutmut]` table for that group, links to the packages and tests, and mutmut's `mutants/`
copy beside them. So a group's run collects coverage over its own tests only, and mutmut then runs, for each
mutant, only the tests that reached the mutated function: each group is feasible on two cores. Prints the score of
each file (killed / mutants; a mutant with no test reaching it counts as surviving), lists the survivors with
`mutmut show` names, writes out/mutation/GROUP/scores.json, and exits 1 when any mutant survives.

An equivalent mutant (one no test can tell apart, because the program behaves the same) is marked where mutmut
reads it: `# pragma: no mutate` on its line, with the reason in the same comment. mutmut 3 mutates code inside
functions only; module-level tables (the instruction forms of the counters) are covered by
tools/mutation_check.py's targeted mutations instead (docs/mutation.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "out" / "mutation"
# what the tests import and read: linked into a group's folder, copied by mutmut into mutants/
PACKAGES = ("irscope", "compiler_index", "suite", "patterns", "ladder", "tools", "mcp_server")
ALSO = ("tests", "docs", "README.md")
KILLED = ("killed", "timeout", "caught by type check")  # mutmut's statuses that mean a test told it apart


@dataclass(frozen=True)
class Group:
    name: str
    modules: tuple[str, ...]  # files mutmut mutates (fnmatch patterns, relative to the root)
    tests: tuple[str, ...]  # pytest arguments selecting the tests that exist to catch mistakes there
    # the modules only read what a capture wrote: the tests' captures are kept across mutants
    # (tests/trajectory_cache.py)
    keep_captures: bool = False
    # only these functions' mutants (mutmut's names, fnmatch patterns): a module's part that the group is about
    functions: tuple[str, ...] = ()

    def selects(self, mutant: str) -> bool:
        return not self.functions or any(fnmatch(mutant, f) for f in self.functions)


# the tests of the index's ranking on Triton's own source (they need third_party/triton)
RANKING_ON_TRITON = (
    "test_call_paths_that_reach_a_pass_rank_before_shorter_ones_that_reach_none",
    "test_gates_a_compile_for_the_target_surely_reaches_rank_before_those_it_may",
    "test_each_callee_level_adds_the_gates_of_that_level_once",
)

GROUPS: list[Group] = [
    Group(
        "hazards",
        ("irscope/hazards/*.py",),
        ("tests/irscope/test_hazards.py", "tests/irscope/test_hazard_view.py", "tests/irscope/test_hazard_plans.py"),
        keep_captures=True,
    ),
    Group(
        "signatures",
        ("irscope/signatures/*.py", "irscope/backends/*counters*.py"),
        (
            "tests/irscope/test_signatures_forms.py",
            "tests/irscope/test_signatures_record.py",
            "tests/irscope/test_analysis.py",
            "tests/irscope/test_signatures_engine.py",
            "tests/ascend/test_counters.py",
        ),
        keep_captures=True,  # the counters are computed when a test reads them, from the capture's texts
    ),
    Group(
        "index-ranking",
        (
            "compiler_index/explain.py",
            "compiler_index/queries/gates.py",
            "compiler_index/queries/ops.py",
            "compiler_index/target.py",
        ),
        (
            "tests/compiler_index/test_explain.py",
            "tests/compiler_index/test_queries.py",
            "tests/compiler_index/test_target.py",
            "tests/compiler_index/test_site_ranking.py",
            "tests/compiler_index/test_caller_paths.py",
            *(f"tests/compiler_index/test_triton_integration.py::{t}" for t in RANKING_ON_TRITON),
        ),
        functions=(
            *(
                f"compiler_index.explain.x_{f}__mutmut_*"
                for f in ("_gate_rank", "_site_rank", "_restrict", "_add_gates")
            ),
            "compiler_index.queries.ops.x__caller_paths__mutmut_*",
            "compiler_index.queries.gates.*",
            *(f"compiler_index.target.x_{f}__mutmut_*" for f in ("for_target", "gate_applies", "file_applies")),
        ),
    ),
    Group(
        "index-gates",
        ("compiler_index/extract/cpp.py",),
        ("tests/compiler_index/test_extract_cpp.py", "tests/compiler_index/test_queries.py"),
        functions=tuple(
            f"compiler_index.extract.cpp.x*{f}__mutmut_*"
            for f in (
                "_gates",
                "returns",
                "_in_lambda",
                "guards",
                "guard_chain",
                "_condition",
                "_exits",
                "_top_level_operator",
                "_negate",
                "_balanced",
            )
        ),
    ),
    Group(
        "harness",
        (
            "ladder/harness/correctness.py",
            "ladder/harness/anticheat.py",
            "ladder/harness/gpu_lock.py",
            "ladder/confine.py",
            "ladder/sandbox.py",
        ),
        (
            "tests/harness/test_correctness.py",
            "tests/harness/test_anticheat.py",
            "tests/harness/test_gpu_lock.py",
            "tests/harness/test_confine_writable.py",
            "tests/harness/test_confine_isolation.py",
            "tests/harness/test_sandbox.py",
        ),
        # what decides a verdict: the judge's and the runner's checks of a run, the static check, the GPU lock, the
        # sandbox's command line and its reading of the channel. The monitor and `confine.enter` run in a child
        # started without mutmut's switch, so their mutants could never be turned on; the output transfer's tests
        # are the engine's, a minute per mutant (docs/mutation.md)
        functions=(
            *(
                f"ladder.harness.correctness.x_{f}__mutmut_*"
                for f in ("judge", "run_forward", "output_problems", "_extent", "_span", "_overlaps", "same_bits")
            ),
            *(
                f"ladder.harness.anticheat.x{f}__mutmut_*"
                for f in ("_static_check", "ǁ_Checkerǁ*", "_banned_api", "_foreign_module", "__is_module")
            ),
            *(
                f"ladder.harness.gpu_lock.x{f}__mutmut_*"
                for f in ("ǁGpuLockǁ*", "ǁ_Holdǁ*", "_holders", "_shared", "_exclusive")
            ),
            *(f"ladder.confine.x{f}__mutmut_*" for f in ("ǁConfinementǁcommand", "_outermost", "_ancestors")),
            *(f"ladder.sandbox.x{f}__mutmut_*" for f in ("_parse_message", "ǁSessionǁ_lines", "ǁSessionǁ_pump")),
        ),
    ),
    Group(
        "workspace",
        ("mcp_server/workspace.py",),
        ("tests/mcp/test_workspace.py",),
    ),
    Group(
        "matcher",
        ("patterns/matcher.py",),
        ("tests/patterns/test_matcher.py",),
    ),
]


def config(group: Group) -> str:
    """The group's pyproject.toml: the project's, with its `[tool.mutmut]` table appended."""
    table = {
        "source_paths": list(PACKAGES),
        "only_mutate": list(group.modules),
        "also_copy": list(ALSO),
        "pytest_add_cli_args_test_selection": list(group.tests),
        "pytest_add_cli_args": ["-p", "no:cacheprovider"],
        # seconds added to a mutant's measured test time before mutmut's multiplier: the measure leaves out fixture
        # setup (a capture, the real index), which a fresh session per mutant pays again
        "timeout_constant": 10,
        # workers forked from a server that never ran a test: a capture's background processes, children of the
        # process that collected coverage, would otherwise be reaped by mutmut as if they were its workers
        "process_isolation": "forkserver",
    }
    lines = ["", "[tool.mutmut]", *(f"{key} = {json.dumps(value)}" for key, value in table.items())]
    return (REPO / "pyproject.toml").read_text() + "\n".join(lines) + "\n"


def prepare(group: Group, keep: bool) -> Path:
    work = OUT / group.name
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    for name in (*PACKAGES, *ALSO):
        if not (work / name).exists():
            (work / name).symlink_to(REPO / name)
    (work / "pyproject.toml").write_text(config(group))
    # found beside the copy's packages, so linked there (never copied): the real index's tests read Triton's
    # checkout, the Ascend counters' tests the Ascend environment
    for rel in ("third_party/triton", ".venv-ascend"):
        target, link = REPO / rel, work / "mutants" / rel
        if target.exists() and not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(target.resolve())
    return work


def statuses(work: Path) -> dict[str, dict[str, str]]:
    """mutant name → mutmut status, per mutated file (read from mutmut's .meta files)."""
    from mutmut.stats import status_by_exit_code  # the mutation extra: imported only where it is needed

    out: dict[str, dict[str, str]] = {}
    for meta in sorted((work / "mutants").rglob("*.py.meta")):
        rel = meta.relative_to(work / "mutants").as_posix().removesuffix(".meta")
        data = json.loads(meta.read_text())
        out[rel] = {k: status_by_exit_code[v] for k, v in data.get("exit_code_by_key", {}).items()}
    return out


def sandbox_runs() -> bool:
    from ladder import confine  # the project, installed in the venv that runs this

    return confine.available() is not None


def run_group(group: Group, keep: bool, children: int, retest: bool = False) -> dict:
    work = prepare(group, keep or retest)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if group.keep_captures:
        env["IRSCOPE_TEST_TRAJECTORY_CACHE"] = str(OUT / "captures")
    if sandbox_runs():  # then a mutant that breaks the sandbox's command line fails its tests instead of skipping them
        env["IRSCOPE_SANDBOX_REQUIRED"] = "1"
    mutmut = [sys.executable, "-m", "mutmut"]
    t0 = time.perf_counter()
    print(f"{group.name}: mutmut run in {work.relative_to(REPO)} (its output: mutmut.log there)", flush=True)
    with open(work / "mutmut.log", "w") as log:
        # mutmut reruns the mutants it is given by name (a survivor stays one otherwise, however the tests changed)
        names = [
            m
            for f in statuses(work).values()
            for m, st in f.items()
            if st not in (*KILLED, "skipped") and group.selects(m)
        ]
        argv = [*mutmut, "run", "--max-children", str(children), *(names if retest else group.functions)]
        done = subprocess.run(argv if names or not retest else ["true"], cwd=work, env=env, stdout=log, stderr=log)
    wall = time.perf_counter() - t0
    result = summarize(group, work, done.returncode, round(wall))
    (work / "scores.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def summarize(group: Group, work: Path, returncode: int, wall_s: int) -> dict:
    """Per mutated file: the group's mutants, those checked (an interrupted run leaves some unchecked), those
    killed, the score over the checked ones, and the survivors' names."""
    files = {}
    for path, every in statuses(work).items():
        by_mutant = {m: status for m, status in every.items() if group.selects(m)}
        if not by_mutant:
            continue
        counts = Counter(by_mutant.values())
        total = sum(counts.values()) - counts["skipped"]
        checked = total - counts["not checked"]
        killed = sum(counts[s] for s in KILLED)
        files[path] = {
            "mutants": total,
            "checked": checked,
            "killed": killed,
            "score": round(100 * killed / checked, 1) if checked else None,
            "statuses": dict(counts),
            "survivors": sorted(m for m, s in by_mutant.items() if s not in (*KILLED, "skipped", "not checked")),
        }
    return {"group": group.name, "returncode": returncode, "wall_s": wall_s, "files": files}


def table(results: list[dict]) -> str:
    rows = [("group", "file", "mutants", "checked", "killed", "of them timeouts", "score", "wall s")]
    for r in results:
        for path, f in r["files"].items():
            score = "-" if f["score"] is None else f"{f['score']:.1f} %"
            timeouts = str(f["statuses"].get("timeout", 0))
            counts = (str(f["mutants"]), str(f["checked"]), str(f["killed"]), timeouts)
            rows.append((r["group"], path, *counts, score, str(r["wall_s"])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "-|-".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("groups", nargs="*", metavar="GROUP", help="these groups only (default: all)")
    ap.add_argument("--list", action="store_true", help="list the groups, their files and tests, and exit")
    ap.add_argument("--keep", action="store_true", help="keep mutmut's earlier results (rerun changed code only)")
    ap.add_argument("--retest", action="store_true", help="keep the results and test the survivors again")
    ap.add_argument("--report", action="store_true", help="the table of the last runs' results, running nothing")
    ap.add_argument("--children", type=int, default=os.cpu_count() or 2, help="mutmut's parallel workers")
    args = ap.parse_args(argv)
    known = {g.name: g for g in GROUPS}
    if unknown := [n for n in args.groups if n not in known]:
        print(f"error: no group named {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    chosen = [known[n] for n in args.groups] if args.groups else GROUPS
    if args.list:
        for g in chosen:
            print(f"{g.name}: mutates {' '.join(g.modules)}; tests {' '.join(g.tests)}")
        return 0
    if args.report:
        done = [g for g in chosen if (OUT / g.name / "scores.json").exists()]
        walls = {g.name: json.loads((OUT / g.name / "scores.json").read_text())["wall_s"] for g in done}
        results = [summarize(g, OUT / g.name, 0, walls[g.name]) for g in done]
    else:
        results = [run_group(g, args.keep, args.children, args.retest) for g in chosen]
    print(table(results))
    survivors = [(r["group"], m) for r in results for f in r["files"].values() for m in f["survivors"]]
    for group, name in survivors:
        print(f"survived: {name}  (see it: cd out/mutation/{group} && mutmut show {name})")
    failed = [r["group"] for r in results if r["returncode"] != 0]
    if failed:
        print(f"error: mutmut failed in {', '.join(failed)}", file=sys.stderr)
    return 1 if survivors or failed else 0


if __name__ == "__main__":
    sys.exit(main())
