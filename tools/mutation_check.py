"""Do the tests catch the regressions they exist for? Each entry below is a small, deliberate bug in a core
module and the tests that must fail on it. The check copies the repository (tracked and untracked files, as
they are now) to a temporary directory, applies one mutation there, runs only the named tests, and restores the
file; the working tree is never touched, so Ctrl-C at any point leaves it as it was.

    python tools/mutation_check.py [--only NAME ...] [--include-pending] [--list]

Prints one row per mutation (caught, survived, or error) and exits 1 when any survives or errs. A pending
entry names tests another branch adds: it is skipped until `--include-pending` (drop `pending` once merged).
Run it before a release, not in every CI run; tests/test_mutation_check.py keeps the list well-formed in CI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TIMEOUT_S = 600  # one mutation's tests; a mutation that hangs them counts as caught, flagged


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str  # relative to the repository root
    original: str  # occurs exactly once in `path`
    mutated: str
    tests: tuple[str, ...]  # pytest node ids that must fail
    pending: str = ""  # why the catching tests are not here yet (the branch that adds them); "" when they are


FORMS = "tests/irscope/test_signatures_forms.py::test_counter_counts_every_form"
POLICY = "tests/ladder/test_policy.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "ptx-shuffle-bfly-only",
        "irscope/backends/nvidia_counters.py",
        'InstrRule("sync.shuffle", "ptx", rx(r"^shfl\\.sync")),',
        'InstrRule("sync.shuffle", "ptx", rx(r"^shfl\\.sync\\.bfly")),',
        (f"{FORMS}[ptx-sync.shuffle-up]", f"{FORMS}[ptx-sync.shuffle-idx]"),
    ),
    Mutation(
        "gate-condition-outermost",
        "compiler_index/extract/cpp.py",
        'Gate(caller, kind, guards[0] if guards else "", guards, message, line, snippet)',
        'Gate(caller, kind, guards[-1] if guards else "", guards, message, line, snippet)',
        (
            "tests/compiler_index/test_extract_cpp.py::test_a_deeply_nested_gate_is_conditioned_on_its_innermost_branch",
            "tests/compiler_index/test_queries.py::test_conditions_name_the_innermost_guard_after_the_round_trip",
        ),
    ),
    Mutation(
        "dominance-strict",
        "ladder/policy.py",
        "    if best < DOMINANCE:",
        "    if best <= DOMINANCE:",
        (f"{POLICY}::test_dominance_exactly_at_the_threshold_passes",),
    ),
    Mutation(
        "childproc-no-kill-after-normal-exit",
        "irscope/childproc.py",
        "            timed_out = True\n        kill_group(proc)\n",
        "            timed_out = True\n",
        ("tests/irscope/test_childproc.py::test_the_grandchild_dies_when_the_child_ends",),
    ),
    Mutation(
        "build-progress-off",
        "compiler_index/cli.py",
        "progress=not args.quiet and not args.json and sys.stderr.isatty(),",
        "progress=False,",
        ("tests/compiler_index/test_build.py::test_build_on_a_terminal_shows_progress_unless_quiet",),
    ),
    Mutation(
        "loop-keeps-killed-round-dir",
        "ladder/loop.py",
        "        if rdir.exists():  # left by a run killed before it committed this round\n"
        "            shutil.rmtree(rdir)\n        rdir.mkdir(parents=True)\n",
        "        rdir.mkdir(parents=True, exist_ok=True)\n",
        (
            "tests/test_kill9.py::test_kill_9_mid_round_leaves_no_child_no_half_round_and_the_resume_redoes_it_from_scratch"
            "[optimize]",
        ),
    ),
    Mutation(
        "line-attribution-skips-current-caller",
        "irscope/signatures/engine.py",
        "later = [c for c in callers if c >= previous]",
        "later = [c for c in callers if c > previous]",
        (
            "tests/irscope/test_report.py::test_show_query_and_markdown",
            "tests/irscope/test_signatures_engine.py::"
            "test_a_helper_line_called_from_one_kernel_line_is_that_line_and_from_several_the_nearest_in_order",
        ),
    ),
    Mutation(
        "gpu-lock-helper-unlocked",
        "ladder/harness/gpu_lock.py",
        "return GpuLock(path, on_wait, who, wait_s).exclusive() if path else nullcontext()",
        "return nullcontext()",
        ("tests/harness/test_gpu_lock.py::test_the_helpers_lock_a_path_across_processes_and_only_that_path",),
    ),
    Mutation(
        "cli-search-exit-code",
        "compiler_index/cli.py",
        "render.search)\n    return 0",
        "render.search)\n    return 1",
        ("tests/compiler_index/test_cli.py::test_build_then_query_in_text_and_json",),
    ),
    Mutation(
        "sass-barrier-sync-only",
        "irscope/backends/nvidia_counters.py",
        'InstrRule("sync.barrier", "sass", rx(r"^BAR\\.(?:SYNC|RED)")),',
        'InstrRule("sync.barrier", "sass", rx(r"^BAR\\.SYNC")),',
        (f"{FORMS}[sass-sync.barrier-BAR.RED]",),
    ),
    Mutation(
        "cp-async-cg-only",
        "irscope/backends/nvidia_counters.py",
        'InstrRule("mem.cp_async", "ptx", rx(r"^cp\\.async\\.c[ag]\\.")),',
        'InstrRule("mem.cp_async", "ptx", rx(r"^cp\\.async\\.cg\\.")),',
        (f"{FORMS}[ptx-mem.cp_async-ca]",),
    ),
    Mutation(
        "sass-uniform-predicate-dropped",
        "irscope/parse/asm.py",
        '_SASS_INSTR = re.compile(r"^\\s*/\\*[0-9a-f]{4,}\\*/\\s+(@!?U?P\\w+\\s+)?([A-Z][A-Z0-9_.]*)")',
        '_SASS_INSTR = re.compile(r"^\\s*/\\*[0-9a-f]{4,}\\*/\\s+(@!?P\\w+\\s+)?([A-Z][A-Z0-9_.]*)")',
        (f"{FORMS}[sass-mem.tma-UTMALDG]",),
    ),
    Mutation(
        "rival-class-strict",
        "ladder/policy.py",
        "rivals = [c for c, s in ranked[1:] if s >= DOMINANCE]",
        "rivals = [c for c, s in ranked[1:] if s > DOMINANCE]",
        (f"{POLICY}::test_a_rival_exactly_at_the_threshold_competes",),
    ),
    Mutation(
        "case-at-target-still-matters",
        "ladder/context.py",
        "return {c: w for c, w in weights.items() if w > 0}",
        "return {c: w for c, w in weights.items() if w >= 0}",
        (f"{POLICY}::test_a_case_matters_only_strictly_above_target",),
    ),
    Mutation(
        "conditions-ignore-callee-depth",
        "compiler_index/queries/gates.py",
        "for level in range(callee_depth + 1):",
        "for level in range(1):",
        ("tests/compiler_index/test_queries.py::test_conditions_of_a_pattern",),
    ),
    Mutation(
        "anticheat-eval-allowed",
        "ladder/harness/anticheat.py",
        '        "eval",\n',
        "",
        ("tests/harness/test_anticheat.py::test_forbidden_imports_builtins_and_escapes",),
    ),
    Mutation(
        "sandbox-timeout-ignored",
        "ladder/sandbox.py",
        "if active > b.timeout_s:",
        "if active > 10 * b.timeout_s:",
        ("tests/harness/test_sandbox.py::test_timeout_kills_the_process_group",),
    ),
    Mutation(
        "history-journal-not-wal",
        "ladder/records.py",
        'self._db.execute("PRAGMA journal_mode=WAL")',
        'self._db.execute("PRAGMA journal_mode=DELETE")',
        ("tests/ladder/test_records.py::test_the_store_is_wal_and_schema_versioned",),
    ),
    Mutation(
        "rival-card-share-raised",
        "ladder/policy.py",
        "RIVAL_SHARE = 0.5",
        "RIVAL_SHARE = 0.85",
        (f"{POLICY}::test_rival_cards_are_kept_down_to_half_the_strongest_score",),
    ),
    Mutation(
        "sass-atomic-without-redg",
        "irscope/backends/nvidia_counters.py",
        'rx(r"^(?:ATOM|ATOMG|ATOMS|RED|REDG)\\b")',
        'rx(r"^(?:ATOM|ATOMG|ATOMS|RED)\\b")',
        (f"{FORMS}[sass-compute.atomic-REDG]",),
    ),
    # issue #25's surviving kinds, each with the test written to catch it
    Mutation(
        "sass-shared-load-counted-as-store",
        "irscope/backends/nvidia_counters.py",
        'InstrRule("mem.shared_load", "sass", rx(r"^(?:LDS|LDSM)\\b")),',
        'InstrRule("mem.shared_load", "sass", rx(r"^(?:STS|STSM)\\b")),',
        (f"{FORMS}[sass-mem.shared_load-LDS]", f"{FORMS}[sass-mem.shared_load-LDSM]"),
    ),
    Mutation(
        "call-paths-by-length-only",
        "compiler_index/queries/ops.py",
        "ranked = sorted(unique.values(), key=lambda co: (not co[1], len(co[0])))",
        "ranked = sorted(unique.values(), key=lambda co: len(co[0]))",
        (
            "tests/compiler_index/test_triton_integration.py::"
            "test_call_paths_that_reach_a_pass_rank_before_shorter_ones_that_reach_none",
        ),
    ),
    Mutation(
        "gates-ranked-without-applies",
        "compiler_index/explain.py",
        'return (kind, g.applies not in ("", YES), g.loc.file, g.loc.line)',
        "return (kind, g.loc.file, g.loc.line)",
        (
            "tests/compiler_index/test_triton_integration.py::"
            "test_gates_a_compile_for_the_target_surely_reaches_rank_before_those_it_may",
        ),
    ),
    Mutation(
        "unknown-precondition-blocks",
        "patterns/matcher.py",
        "return any(r.outcome is False for r in self.preconditions)",
        "return any(r.outcome is not True for r in self.preconditions)",
        ("tests/patterns/test_matcher.py::test_a_precondition_whose_fact_is_unknown_does_not_block_the_card",),
    ),
    Mutation(
        "workspace-confined-by-string-prefix",
        "mcp_server/workspace.py",
        "if not resolved.is_relative_to(self.root):",
        "if not str(resolved).startswith(str(self.root)):",
        ("tests/mcp/test_workspace.py::test_a_sibling_that_shares_the_roots_name_as_a_prefix_is_outside",),
    ),
    Mutation(
        "triton-frames-by-string-prefix",
        "irscope/parse/locations.py",
        'self.file.startswith(TRITON_DIR + "/")',
        "self.file.startswith(TRITON_DIR)",
        (
            "tests/irscope/test_parse_inline.py::"
            "test_a_package_beside_triton_whose_name_starts_with_triton_is_not_triton",
        ),
    ),
    Mutation(
        "sandbox-read-only-bind-writable",
        "ladder/confine.py",
        'cmd += ["--ro-bind", str(b), str(b)]',
        'cmd += ["--bind", str(b), str(b)]',
        ("tests/harness/test_confine_writable.py::test_only_the_scratch_and_the_granted_files_are_writable",),
    ),
    Mutation(
        "sandbox-keeps-the-parents-environment",
        "ladder/confine.py",
        'cmd += ["--die-with-parent", "--new-session", "--clearenv"]',
        'cmd += ["--die-with-parent", "--new-session"]',
        ("tests/harness/test_confine_isolation.py::test_only_the_given_environment_reaches_the_child",),
    ),
    Mutation(
        "runner-input-check-removed",
        "ladder/harness/correctness.py",
        "if isinstance(now, torch.Tensor) and not same_bits(now, before):",
        "if False:",
        ("tests/harness/test_correctness.py::test_a_forward_that_rewrites_a_nan_payload_in_its_input_is_caught",),
    ),
]


def problems(mutations: list[Mutation], root: Path = REPO) -> list[str]:
    """What makes an entry unusable: its snippet missing or repeated, no change, no catching test."""
    out = []
    names = [m.name for m in mutations]
    out += [f"{n}: the name is used twice" for n in sorted({n for n in names if names.count(n) > 1})]
    for m in mutations:
        path = root / m.path
        if not path.is_file():
            out.append(f"{m.name}: {m.path} does not exist")
            continue
        found = path.read_text().count(m.original)
        if found != 1:
            out.append(f"{m.name}: the original snippet occurs {found} times in {m.path}, not once")
        if m.original == m.mutated:
            out.append(f"{m.name}: the mutation changes nothing")
        if not m.tests:
            out.append(f"{m.name}: no test is named to catch it")
        for t in m.tests:
            if not (root / t.split("::", 1)[0]).is_file():
                out.append(f"{m.name}: test file of {t} does not exist")
    return out


def _copy_repo(dest: Path) -> None:
    """The working tree as git sees it (tracked and untracked, not ignored files), plus third_party/."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for rel in filter(None, (p.decode() for p in listed)):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    third = REPO / "third_party" / "triton"
    if third.exists():  # a checkout or a link to one: linked, never copied
        (dest / "third_party").mkdir(exist_ok=True)
        (dest / "third_party" / "triton").symlink_to(third.resolve())


def _pytest(copy: Path, tests: tuple[str, ...]) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--no-header", *tests]
    try:
        proc = subprocess.run(argv, cwd=copy, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {TIMEOUT_S} s"
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    return proc.returncode, lines[-1] if lines else ""


def check(mutations: list[Mutation], baseline: bool = True) -> list[tuple[Mutation, str, float]]:
    rows: list[tuple[Mutation, str, float]] = []
    with tempfile.TemporaryDirectory(prefix="mutation-check-") as tmp:
        copy = Path(tmp)
        _copy_repo(copy)
        if baseline:  # the named tests must pass unmutated, or "caught" would mean nothing
            every = tuple(dict.fromkeys(t for m in mutations for t in m.tests))
            rc, last = _pytest(copy, every)
            if rc != 0:
                raise SystemExit(f"the named tests fail without any mutation (pytest exit {rc}): {last}")
        for m in mutations:
            target = copy / m.path
            original = target.read_text()
            t0 = time.perf_counter()
            target.write_text(original.replace(m.original, m.mutated, 1))
            try:
                rc, last = _pytest(copy, m.tests)
            finally:
                target.write_text(original)
            result = {0: "SURVIVED", 1: "caught", -1: "caught (timeout)"}.get(rc, f"error (pytest exit {rc}): {last}")
            rows.append((m, result, time.perf_counter() - t0))
            print(f"  {m.name}: {result}", file=sys.stderr, flush=True)
    return rows


def table(rows: list[tuple[Mutation, str, float]]) -> str:
    head = ("mutation", "file", "result", "s", "caught by")
    body = [(m.name, m.path, r, f"{s:.0f}", ", ".join(t.split("::", 1)[1] for t in m.tests)) for m, r, s in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in (head, *body)]
    lines.insert(1, "-|-".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these mutations only")
    ap.add_argument("--include-pending", action="store_true", help="also the entries whose tests are pending")
    ap.add_argument("--no-baseline", action="store_true", help="skip running the named tests unmutated first")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.only and (unknown := set(args.only) - {m.name for m in MUTATIONS}):
        print(f"error: no mutation named {', '.join(sorted(unknown))} (see --list)", file=sys.stderr)
        return 2
    if args.list:
        for m in chosen:
            print(f"{m.name:38} {m.path}" + (f"  [pending: {m.pending}]" if m.pending else ""))
        return 0
    if bad := problems(chosen):
        print("error: the mutation list is malformed:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 2
    skipped = [m for m in chosen if m.pending and not args.include_pending]
    run = [m for m in chosen if m not in skipped]
    t0 = time.perf_counter()
    rows = check(run, baseline=not args.no_baseline)
    print(table(rows))
    for m in skipped:
        print(f"skipped (pending): {m.name}: {m.pending}")
    failed = [m.name for m, r, _ in rows if not r.startswith("caught")]
    print(f"{len(rows) - len(failed)} of {len(rows)} caught in {time.perf_counter() - t0:.0f} s")
    if failed:
        print(f"not caught: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
