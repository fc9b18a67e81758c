"""The `patterns` command line: every subcommand on real inputs, and clear errors on bad ones."""

import json
import subprocess
import sys
from pathlib import Path

from patterns.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES_FILE = REPO / "irscope" / "examples" / "kernels.py"
NEW_GELU = REPO / "suite" / "kernels" / "new_gelu.py"
HISTORY = Path(__file__).resolve().parent / "data" / "history.jsonl"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cards_commands(capsys):
    code, out, _ = run(capsys, "validate")
    assert code == 0 and "card(s) valid" in out and int(out.split()[0]) >= 24
    code, out, _ = run(capsys, "list", "--json")
    ids = [c["id"] for c in json.loads(out)]
    assert code == 0 and "index-free-top2" in ids and len(ids) >= 24
    code, out, _ = run(capsys, "list", "--family", "tuning")
    assert code == 0 and "autotune-configs" in out and "index-free-top2" not in out
    code, out, _ = run(capsys, "show", "index-free-top2")
    assert code == 0 and out.startswith("---\n") and "## Rewrite" in out
    code, _, err = run(capsys, "show", "nope")
    assert code == 2 and "no card 'nope'" in err


def test_match_from_source(capsys):
    code, out, _ = run(capsys, "match", "--source", str(EXAMPLES_FILE), "--kernel", "moe_group_top2_argmax")
    assert code == 0
    assert "1. index-free-top2 (index-reduction, optimization)" in out
    assert "+ src.mask_from_index   [src.mask_from_index=True]" in out
    assert "? unknown (missing evidence): ttir.compute.reduce_index >= 1" in out


def test_match_input_errors(capsys, tmp_path):
    code, _, err = run(capsys, "match")
    assert code == 2 and "--source FILE, --trajectory DIR or --evidence JSON" in err
    code, _, err = run(capsys, "match", "--source", str(tmp_path / "missing.py"))
    assert code == 2 and "cannot read kernel source" in err
    bad = tmp_path / "prof.json"
    bad.write_text("[1, 2]")
    code, _, err = run(capsys, "match", "--source", str(NEW_GELU), "--profile", str(bad))
    assert code == 2 and "must be a JSON object" in err
    code, _, err = run(capsys, "match", "--source", str(NEW_GELU), "--family", "nope")
    assert code == 2 and "no family 'nope'" in err


def test_apply_writes_candidates_and_checks_them(capsys, tmp_path):
    code, out, _ = run(capsys, "apply", "--list")
    assert code == 0 and "grouped_order" in out and "launch_config_sweep" in out
    code, out, _ = run(capsys, "apply", str(NEW_GELU), "--applier", "cache_hints", "--out", str(tmp_path))
    assert code == 0 and "new_gelu.cache_hints.0" in out
    manifest = json.loads((tmp_path / "candidates.json").read_text())
    assert [m["applier"] for m in manifest] == ["cache_hints", "cache_hints"]
    assert 'eviction_policy="evict_first"' in (tmp_path / "new_gelu.cache_hints.0.py").read_text()
    code, out, _ = run(capsys, "apply", str(NEW_GELU), "--applier", "divisibility_hints", "--check", "new_gelu")
    assert code == 0 and out.strip().endswith("[ok]")
    code, _, err = run(capsys, "apply", str(NEW_GELU), "--applier", "nope")
    assert code == 2 and "no applier 'nope'" in err
    argmax = REPO / "suite" / "kernels" / "argmax_dim1.py"
    code, out, _ = run(capsys, "apply", str(argmax), "--applier", "index_free_topk")
    assert code == 0 and out.splitlines() == [
        f"no applier applies to {argmax}",
        "  index_free_topk: argmax_dim1_kernel: line 21: the index of tl.max(..., return_indices=True) is stored at "
        "line 25: the index is an output, not only a mask",
    ]


def test_synthesize(capsys, tmp_path):
    code, out, _ = run(capsys, "synthesize", str(HISTORY), "--out", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 0 and len(data["assignments"]) == 12 and len(data["proposals"]) == 2
    assert str(tmp_path / "index.json") in data["written"]
    code, _, err = run(capsys, "synthesize", str(tmp_path / "none.jsonl"))
    assert code == 2 and "cannot read history" in err


def test_console_script():
    exe = Path(sys.executable).parent / "patterns"
    out = subprocess.run([str(exe), "list", "--family", "index-reduction"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "index-free-top2" in out.stdout and "value-mask-ties" in out.stdout


def test_apply_refuses_a_module_with_a_syntax_error_and_an_out_that_is_a_file(tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text("import triton\n\n\ndef forward(x):\n    return x +\n")
    assert main(["apply", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err == f"patterns apply: {broken}:5: syntax error: invalid syntax; fix it and run again\n"
    out = tmp_path / "notes.txt"
    out.write_text("mine")
    gelu = Path(__file__).resolve().parents[2] / "suite" / "kernels" / "new_gelu.py"
    assert main(["apply", str(gelu), "--out", str(out)]) == 2
    assert (
        capsys.readouterr().err
        == f"patterns apply: --out {out} is a file: give a directory for the candidate modules\n"
    )
    assert out.read_text() == "mine"
