"""The unseen and fresh sets' root causes, checked with plain Triton: no irscope, no diagnosis rules.

unseen.yaml and fresh.yaml hold kernels written apart from irscope's rules, in the style of public Triton projects
(fresh.yaml by another author, after the ladder had learned from unseen.yaml's first run). Each case
carries `evidence`: what to count in the compiler's own output for cuda:90 (TTIR, TTGIR, PTX, SASS, or ptxas's
resource report), how many the kernel as written has (`written`), and how many its fix has (`fixed`). The fix is
either `fixed_by` (launch settings or arguments, merged as tests/diagnosis/cases.py does) or `fix`, the same
kernel with the smallest source change, kept apart under kernels/SET/fixes/ so that the file under diagnosis
does not contain it. Every case is compiled here with `triton.compile` and an ASTSource, specialized the way the
JIT specializes a launch, so that these counts hold whatever irscope says; the `new:` symptoms, which the shared
signature checker (test_cases.py) cannot check, are proven only here.

    python -m tests.diagnosis.test_unseen [--probe] [NAME …]  # the counts as written and fixed (--probe: the usual)
    python -m tests.diagnosis.test_unseen --write-comments     # end each kernel file with its counts from its yaml
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

HERE = Path(__file__).parent
# the sets checked here: name → (cases, healthy ones) their size stays within; each file is tests/diagnosis/NAME.yaml
# and its kernels lie under kernels/NAME/ (fresh.yaml: written after the ladder learned from unseen.yaml, issue #27)
SETS = {"unseen": ((14, 18), (3, 4)), "fresh": ((8, 12), (2, 3))}
STAGES = ("ttir", "ttgir", "llir", "ptx", "sass", "ptxas", "metadata", "diagnostics")
SET_KEY = "_set"  # which set a case came from (added on loading)


def _raw_cases(name: str | None = None) -> list[dict[str, Any]]:
    return [
        {**raw, SET_KEY: set_name}
        for set_name in SETS
        if name in (None, set_name)
        for raw in yaml.safe_load((HERE / f"{set_name}.yaml").read_text())["cases"]
    ]


def _case_id(raw: dict[str, Any]) -> str:
    prefix = "" if raw[SET_KEY] == "unseen" else f"{raw[SET_KEY]}/"
    return f"{prefix}{Path(raw['kernel'].split(':')[0]).stem}-{raw['expect']['symptom']}"


@dataclass(frozen=True)
class Build:
    """One compile request: kernel FILE:NAME (relative to this directory), arguments as cases.yaml writes them."""

    kernel: str
    args: tuple[tuple[str, Any], ...]
    constexprs: tuple[tuple[str, Any], ...]
    num_warps: int
    num_stages: int
    target: str

    @staticmethod
    def of(raw: dict[str, Any], overrides: dict[str, Any] | None = None, kernel: str | None = None) -> Build:
        o = overrides or {}
        return Build(
            kernel or raw["kernel"],
            tuple({**raw.get("args", {}), **o.get("args", {})}.items()),
            tuple({**raw.get("constexprs", {}), **o.get("constexprs", {})}.items()),
            o.get("num_warps", raw["num_warps"]),
            o.get("num_stages", raw["num_stages"]),
            raw["target"],
        )


def _load_jit(spec: str):
    path, _, name = spec.rpartition(":")
    file = HERE / path
    mod_name = "unseen_" + re.sub(r"\W", "_", str(file.relative_to(HERE).with_suffix("")))
    mod_spec = importlib.util.spec_from_file_location(mod_name, file)
    assert mod_spec and mod_spec.loader
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return getattr(module, name)


def _specialize(fn, args: dict[str, Any], constexprs: dict[str, Any]):
    """Signature, constants and divisibility attributes as the JIT derives them from a launch's arguments."""
    signature: dict[str, str] = {}
    consts: dict[tuple[int, ...], Any] = {}
    attrs: dict[tuple[int, ...], list] = {}
    for i, name in enumerate(fn.arg_names):
        if name in constexprs:
            signature[name] = "constexpr"
            consts[(i,)] = constexprs[name]
            continue
        value = args[name]
        if isinstance(value, str) and value.startswith("*"):
            ty, _, align = value.partition(":")
            signature[name] = ty
            if not align or int(align) % 16 == 0:  # a pointer the allocator aligned (16 bytes or more)
                attrs[(i,)] = [["tt.divisibility", 16]]
        elif isinstance(value, bool) or value is None:
            raise TypeError(f"{name}: give booleans as constexprs")
        elif isinstance(value, int):
            if value == 1:
                signature[name] = "constexpr"
                consts[(i,)] = 1
                continue
            signature[name] = "i32" if -(2**31) <= value < 2**31 else "i64"
            if value % 16 == 0:
                attrs[(i,)] = [["tt.divisibility", 16]]
        elif isinstance(value, float):
            signature[name] = "fp32"
        else:
            raise TypeError(f"{name}: unsupported argument {value!r}")
    return signature, consts, attrs


@dataclass
class Compiled:
    """The compiler's own output for one Build, and the seconds a plain compile took."""

    asm: dict[str, str]
    kernel_file: str
    seconds: float


@cache
def compile_build(build: Build) -> Compiled:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = _load_jit(build.kernel)
    signature, consts, attrs = _specialize(fn, dict(build.args), dict(build.constexprs))
    backend, _, arch = build.target.partition(":")
    assert backend == "cuda", "the unseen and fresh sets are for NVIDIA targets"
    src = ASTSource(fn, signature, consts, attrs)
    with _stderr_of_the_compiler() as diagnostics:
        start = time.perf_counter()
        k = triton.compile(
            src,
            target=GPUTarget("cuda", int(arch), 32),
            options={"num_warps": build.num_warps, "num_stages": build.num_stages},
        )
        seconds = time.perf_counter() - start
    asm = {s: k.asm[s] for s in ("ttir", "ttgir", "llir", "ptx")}
    asm["diagnostics"] = diagnostics["text"]
    asm["metadata"] = f"shared {k.metadata.shared}\nnum_warps {k.metadata.num_warps}\n"
    asm["sass"], asm["ptxas"] = _machine_code(k.asm["ptx"], k.asm["cubin"], int(arch))
    return Compiled(asm, str(HERE / build.kernel.rpartition(":")[0]), seconds)


@contextlib.contextmanager
def _stderr_of_the_compiler():
    """Compile afresh (no cache hit) with MLIR's warnings and remarks printed, and keep what went to stderr."""
    saved_env = {k: os.environ.get(k) for k in ("MLIR_ENABLE_DIAGNOSTICS", "TRITON_ALWAYS_COMPILE")}
    os.environ["MLIR_ENABLE_DIAGNOSTICS"] = "warnings,remarks"
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    saved_fd = os.dup(2)
    captured: dict[str, str] = {}
    with tempfile.TemporaryFile("w+") as f:
        sys.stderr.flush()
        os.dup2(f.fileno(), 2)
        try:
            yield captured
        finally:
            sys.stderr.flush()
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            f.seek(0)
            captured["text"] = f.read()


def _machine_code(ptx: str, cubin: bytes, arch: int) -> tuple[str, str]:
    """SASS (nvdisasm of the cubin Triton built) and ptxas's -v report for the same PTX."""
    from triton.backends.nvidia.compiler import get_ptxas

    ptxas = get_ptxas(arch).path
    nvdisasm = Path(ptxas).parent / "nvdisasm"
    suffix = "a" if arch >= 90 else ""
    with tempfile.TemporaryDirectory() as tmp:
        cubin_path, ptx_path = Path(tmp) / "k.cubin", Path(tmp) / "k.ptx"
        cubin_path.write_bytes(cubin)
        ptx_path.write_text(ptx)
        sass = subprocess.run(
            [str(nvdisasm), "-c", "-g", str(cubin_path)], capture_output=True, text=True, check=True
        ).stdout
        report = subprocess.run(
            [ptxas, f"-arch=sm_{arch}{suffix}", "-v", str(ptx_path), "-o", str(Path(tmp) / "o")],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
    return sass, report


# --- where an instruction comes from ----------------------------------------------------------------------------


def _loop_regions(ttgir: str) -> list[tuple[int, int]]:
    """Line spans (start, end) of the outermost scf.for / scf.while ops of the TTGIR, brace matched."""
    lines = ttgir.splitlines()
    spans, i = [], 0
    while i < len(lines):
        if re.search(r"\bscf\.(for|while)\b", lines[i]):
            depth, start = lines[i].count("{") - lines[i].count("}"), i
            i += 1
            while i < len(lines) and depth > 0:
                depth += lines[i].count("{") - lines[i].count("}")
                i += 1
            spans.append((start, i))
        else:
            i += 1
    return spans


def _mlir_lines(text: str, kernel_file: str) -> list[int | None]:
    """For each line of an MLIR module, the kernel source line its op's location points to (None if elsewhere).

    Locations are resolved through the `#locN = loc(...)` aliases; a call site resolves to its outermost caller,
    so code inlined from triton.language is charged to the kernel line that called it.
    """
    aliases = dict(re.findall(r"^(#loc\d*) = (loc\(.*\))\s*$", text, flags=re.M))
    file_re = re.escape(kernel_file)

    @cache
    def resolve(loc: str) -> int | None:
        if "callsite(" in loc:
            loc = loc[loc.rfind(" at ") + 4 :]
        m = re.search(rf'"{file_re}":(\d+):\d+', loc)
        if m:
            return int(m.group(1))
        for ref in re.findall(r"#loc\d*\b", loc):
            if ref in aliases:
                got = resolve(aliases[ref])
                if got is not None:
                    return got
        return None

    out: list[int | None] = []
    for line in text.splitlines():
        m = re.search(r"loc\((#loc\d*)\)\s*$", line) or re.search(r"(loc\(.*\))\s*$", line)
        out.append(resolve(m.group(1)) if m and not line.startswith("#loc") else None)
    return out


def _ptx_lines(ptx: str, kernel_file: str) -> list[int | None]:
    """For each PTX line, the kernel source line of the last `.loc` before it.

    Code inlined from triton.language carries its call chain in the directive's comment
    (`// standard.py:263:15 @[ standard.py:293:36 @[ kernel.py:22:17 ] ]`): the outermost caller is the line.
    """
    base = os.path.basename(kernel_file)
    files = {num: os.path.basename(name) for num, name in re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.M)}
    out: list[int | None] = []
    current: int | None = None
    for line in ptx.splitlines():
        m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)\s+\d+[^/]*(?://(.*))?$", line)
        if m:
            num, src_line, comment = m.groups()
            chain = re.findall(r"([\w.-]+\.py):(\d+):\d+", comment or "")
            file, at = chain[-1] if chain else (files.get(num), src_line)
            current = int(at) if file == base else None
        out.append(current)
    return out


def label(item: dict[str, Any]) -> str:
    """An evidence item as one line: stage, scope and pattern."""
    scope = item.get("in", "kernel") + (f"@{item['line']}" if "line" in item else "")
    return f"{item['stage']}[{scope}] {item['count']}"


def count(c: Compiled, item: dict[str, Any]) -> int:
    """One evidence item's count in a compile: a regex over a stage, optionally inside loops or on one line."""
    stage = item["stage"]
    text = c.asm[stage]
    if stage == "ptxas":
        m = re.search(rf"(\d+) bytes {item['count']}", text) or re.search(rf"Used (\d+) {item['count']}", text)
        assert m, f"ptxas reported no {item['count']!r}"
        return int(m.group(1))
    if stage == "metadata":
        m = re.search(rf"^{item['count']} (\d+)$", text, flags=re.M)
        assert m, f"no {item['count']!r} in the kernel's metadata"
        return int(m.group(1))
    lines = text.splitlines()
    keep = [True] * len(lines)
    if item.get("in", "kernel") == "loop":
        assert stage in ("ttir", "ttgir"), "loops are read from the MLIR stages"
        keep = [False] * len(lines)
        for start, end in _loop_regions(text):
            keep[start:end] = [True] * (end - start)
    if "line" in item:
        where = _ptx_lines(text, c.kernel_file) if stage == "ptx" else _mlir_lines(text, c.kernel_file)
        keep = [k and w == item["line"] for k, w in zip(keep, where)]
    pattern = re.compile(item["count"])
    return sum(len(pattern.findall(line)) for line, k in zip(lines, keep) if k)


# --- the cases --------------------------------------------------------------------------------------------------

COMMENT_MARK = "# Evidence (tests/diagnosis/"


def evidence_comment(raw: dict[str, Any]) -> str:
    """The comment each kernel file ends with: what was counted, where, as written and after the fix."""
    set_name = raw[SET_KEY]
    if raw.get("fix"):
        fix_file = raw["fix"].rpartition(":")[0].removeprefix(f"kernels/{set_name}/")
        fix = f"# Fix: {fix_file} (the same kernel, changed there)."
    elif raw.get("fixed_by"):
        fix = "# Fix: " + ", ".join(f"{k}={v}" for k, v in raw["fixed_by"].items()) + " (fixed_by)."
    else:
        fix = "# Healthy: the kernel as written only."
    head = [
        f"{COMMENT_MARK}{set_name}.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own",
        f"# output for {raw['target']}, compiled with plain triton.compile, as written -> with the fix.",
        fix,
    ]
    body = []
    for item in raw["evidence"]:
        after = f" -> {item['fixed']}" if "fixed" in item else ""
        body.append(f"#   {label(item)}: {item['written']}{after}")
    return "\n".join(head + body) + "\n"


def _fix_build(raw: dict[str, Any]) -> Build | None:
    if raw.get("fix"):
        return Build.of(raw, raw.get("fixed_by"), kernel=raw["fix"])
    if raw.get("fixed_by"):
        return Build.of(raw, raw["fixed_by"])
    return None


def _params() -> list:
    return [pytest.param(raw, id=_case_id(raw)) for raw in _raw_cases()]


@pytest.mark.parametrize("set_name", list(SETS))
def test_the_file_is_well_formed(set_name: str):
    raws = _raw_cases(set_name)
    (fewest, most), (fewest_healthy, most_healthy) = SETS[set_name]
    assert fewest <= len(raws) <= most
    healthy = [r for r in raws if r["expect"]["symptom"] == "none"]
    assert fewest_healthy <= len(healthy) <= most_healthy
    assert all(r["kernel"].startswith(f"kernels/{set_name}/") for r in raws)
    assert len({r["kernel"] for r in raws}) == len(raws), "one case per kernel"
    for raw in raws:
        e = raw["expect"]
        assert e["why"].strip(), _case_id(raw)
        assert raw.get("evidence"), f"{_case_id(raw)} proves nothing"
        if e["symptom"] == "none":
            assert not (raw.get("fix") or raw.get("fixed_by")), _case_id(raw)
            assert all("fixed" not in item for item in raw["evidence"]), _case_id(raw)
        else:
            assert raw.get("fix") or raw.get("fixed_by"), f"{_case_id(raw)} has no fix"
            assert all("fixed" in item for item in raw["evidence"]), _case_id(raw)
            assert re.fullmatch(r"(new:)?[a-z0-9]+(-[a-z0-9]+)*", e["symptom"]), e["symptom"]
            assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", e["family"]), e["family"]


@pytest.mark.parametrize("raw", _params())
def test_kernel_file_names_its_root_cause(raw: dict[str, Any]):
    """The docstring says healthy or names the symptom; the line is inside the kernel; the fix file is apart."""
    import ast

    path, _, name = raw["kernel"].rpartition(":")
    tree = ast.parse((HERE / path).read_text())
    doc = ast.get_docstring(tree) or ""
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    e = raw["expect"]
    if e["symptom"] == "none":
        assert "Healthy" in doc
        assert e.get("line") is None and e.get("family") is None
        return
    assert f"({e['symptom']})" in doc
    if e.get("line") is not None:
        assert fn.lineno < e["line"] <= fn.end_lineno
    if raw.get("fix"):
        fix_path = raw["fix"].rpartition(":")[0]
        assert fix_path != path and "/fixes/" in fix_path


@pytest.mark.parametrize("raw", _params())
def test_kernel_file_ends_with_its_counts(raw: dict[str, Any]):
    """The counts are in the kernel file too (python -m tests.diagnosis.test_unseen --write-comments)."""
    text = (HERE / raw["kernel"].rpartition(":")[0]).read_text()
    assert text.endswith("\n\n" + evidence_comment(raw))


@pytest.mark.parametrize("raw", [p for p in _params() if p.values[0]["expect"].get("l4")])
def test_l4_names_real_triton_source(raw: dict[str, Any], triton_checkout: Path):
    l4 = raw["expect"]["l4"]
    text = (triton_checkout / l4["file"]).read_text()
    assert f"{l4['function'].split('::')[-1]}(" in text


@pytest.mark.slow
@pytest.mark.parametrize("raw", _params())
def test_evidence_as_written(raw: dict[str, Any]):
    c = compile_build(Build.of(raw))
    got = [(label(item), count(c, item)) for item in raw["evidence"]]
    want = [(label(item), item["written"]) for item in raw["evidence"]]
    assert got == want


@pytest.mark.slow
@pytest.mark.parametrize("raw", [p for p in _params() if _fix_build(p.values[0])])
def test_evidence_after_the_fix(raw: dict[str, Any]):
    build = _fix_build(raw)
    assert build is not None
    c = compile_build(build)
    got = [(label(item), count(c, item)) for item in raw["evidence"]]
    want = [(label(item), item["fixed"]) for item in raw["evidence"]]
    assert got == want


PROBES = [  # what `--probe` prints for every case: the usual suspects, by stage
    {"stage": "ttgir", "in": "loop", "count": r"ttg\.async_copy_global_to_local"},
    {"stage": "ttgir", "in": "loop", "count": r"\btt\.load\b"},
    {"stage": "ttgir", "in": "loop", "count": r"ttng\.warp_group_dot_wait .*pendings = 0\b"},
    {"stage": "ttgir", "in": "loop", "count": r"ttng\.warp_group_dot_wait .*pendings = [1-9]"},
    {"stage": "ttgir", "in": "loop", "count": r"ttg\.local_alloc %"},
    {"stage": "ttgir", "in": "loop", "count": r"ttg\.convert_layout"},
    {"stage": "ttgir", "count": r"ttg\.convert_layout"},
    {"stage": "ttgir", "count": r"tt\.atomic_rmw"},
    {"stage": "ptx", "count": r"\bcp\.async\.c[ag]\b"},
    {"stage": "ptx", "count": r"\b(div|rem)\.[su]64\b"},
    {"stage": "ptx", "count": r"\b(atom|red)\.global\b"},
    {"stage": "ptx", "count": r"\bbar\.sync\b"},
    {"stage": "ptx", "count": r"\bst\.shared\b"},
    {"stage": "ptx", "count": r"\bld\.global\b"},
    {"stage": "ptx", "count": r"\bld\.global[.\w:]*\.v4\."},
    {"stage": "ptx", "count": r"\bst\.global\b"},
    {"stage": "ptx", "count": r"\bst\.global[.\w:]*\.v4\."},
    {"stage": "ptxas", "count": "spill stores"},
    {"stage": "ptxas", "count": "registers"},
]


def _write_comment(raw: dict[str, Any]) -> None:
    path = HERE / raw["kernel"].rpartition(":")[0]
    text = path.read_text()
    if COMMENT_MARK in text:
        text = text[: text.index(COMMENT_MARK)].rstrip("\n") + "\n"
    path.write_text(text + "\n" + evidence_comment(raw))


def main(argv: list[str]) -> int:
    probe, write = "--probe" in argv, "--write-comments" in argv
    argv = [a for a in argv if a not in ("--probe", "--write-comments")]
    if write:
        for raw in _raw_cases():
            if not argv or any(a in _case_id(raw) for a in argv):
                _write_comment(raw)
        return 0
    for raw in _raw_cases():
        if argv and not any(a in _case_id(raw) for a in argv):
            continue
        builds = {"written": Build.of(raw), "fixed": _fix_build(raw)}
        print(_case_id(raw))
        for which, build in builds.items():
            if build is None:
                continue
            c = compile_build(build)
            print(f"  {which:8s} compiled in {c.seconds:.1f}s")
            for item in PROBES if probe else raw.get("evidence", []):
                print(f"    {count(c, item):6d}  {label(item)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
