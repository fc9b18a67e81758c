"""Every command line of the project (irscope, compiler-index, patterns, ladder) documents every argument, prints
its version, and refuses impossible numbers and targets in the parser, with the flag's name and no traceback."""

import argparse

import pytest

from compiler_index.cli import main as index_main
from compiler_index.cli import parser as index_parser
from irscope.cli import build_parser as irscope_parser
from irscope.cli import main as irscope_main
from irscope.version import __version__
from ladder.cli import build_parser as ladder_parser
from ladder.cli import main as ladder_main
from patterns.cli import _parser as patterns_parser
from patterns.cli import main as patterns_main

PARSERS = {
    "irscope": irscope_parser,
    "compiler-index": index_parser,
    "patterns": patterns_parser,
    "ladder": lambda: ladder_parser()[0],
}
MAINS = {"irscope": irscope_main, "compiler-index": index_main, "patterns": patterns_main, "ladder": ladder_main}


def walk(parser: argparse.ArgumentParser, path: str):
    """(command path, action) of every argument of `parser` and of its subcommands, recursively."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, f"{path} {name}")
        else:
            yield path, action


@pytest.mark.parametrize("prog", PARSERS)
def test_every_argument_has_a_help_text(prog):
    undocumented = [
        f"{path}: {'/'.join(action.option_strings) or action.dest}"
        for path, action in walk(PARSERS[prog](), prog)
        if not action.help  # argparse.SUPPRESS (a hidden option) is a help text too
    ]
    assert not undocumented, "arguments without help: " + "; ".join(undocumented)


@pytest.mark.parametrize("prog", PARSERS)
def test_version(prog, capsys):
    with pytest.raises(SystemExit) as e:
        MAINS[prog](["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"{prog} {__version__}\n"


def argparse_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("prog", "args", "message"),
    [
        (
            "irscope",
            ["dump", "k.py:k", "--num-stages", "-1", "--out", "d"],
            "argument --num-stages: -1 must be at least 1",
        ),
        ("irscope", ["dump", "k.py:k", "--maxnreg=-1", "--out", "d"], "argument --maxnreg: -1 must be at least 1"),
        ("irscope", ["dump", "k.py:k", "--config", "-2", "--out", "d"], "argument --config: -2 must be at least 0"),
        ("compiler-index", ["build", "--jobs", "-3"], "argument --jobs: -3 must be at least 0"),
        ("compiler-index", ["search", "x", "--limit", "0"], "argument --limit: 0 must be at least 1"),
        ("patterns", ["apply", "k.py", "--max", "-1"], "argument --max: -1 must be at least 1"),
        ("ladder", ["diagnose", "k.py:k", "--num-warps", "0"], "argument --num-warps: 0 must be at least 1"),
        (
            "ladder",
            ["diagnose", "softmax", "--counterfactuals", "-1"],
            "argument --counterfactuals: -1 must be at least 0",
        ),
        (
            "ladder",
            ["diagnose", "softmax", "--sol-target", "nan"],
            "argument --sol-target: nan must be a finite number > 0 and ≤ 1",
        ),
        (
            "ladder",
            ["optimize", "softmax", "--llm", "m", "--temperature", "nan", "--out", "o"],
            "argument --temperature: nan must be a finite number ≥ 0 and ≤ 2",
        ),
        (
            "ladder",
            ["optimize", "softmax", "--offline", "--max-tokens", "-5", "--out", "o"],
            "argument --max-tokens: -5 must be at least 1",
        ),
        ("ladder", ["bench", "--out", "o", "--rep-ms", "inf"], "argument --rep-ms: inf must be a finite number > 0"),
    ],
)
def test_impossible_numbers_are_refused_by_the_parser(prog, args, message, capsys):
    with pytest.raises(SystemExit) as e:
        MAINS[prog](args)
    assert e.value.code == 2
    assert argparse_error(capsys).endswith(f"error: {message}")


def test_deadline_nan_is_refused(tmp_path, capsys):
    assert ladder_main(["optimize", "softmax", "--offline", "--deadline-s", "nan", "--out", str(tmp_path)]) == 2
    assert "--deadline-s must be > 0, got nan" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("cuda:999", "target 'cuda:999': Triton's ptxas cannot build for sm_999; CUDA capabilities it supports: 50,"),
        ("cuda:110", "Triton's ptxas cannot build for sm_110"),
        ("hip:gfx801", "target 'hip:gfx801': Triton's AMD backend has no ISA family for gfx801; supported: gfx908,"),
    ],
)
def test_targets_the_backend_cannot_build_for_are_refused_up_front(target, message, tmp_path, capsys):
    kernel = tmp_path / "k.py"
    kernel.write_text("import triton\n\n\n@triton.jit\ndef k(x_ptr):\n    pass\n")
    out = tmp_path / "dump"
    assert irscope_main(["dump", f"{kernel}:k", "--arg", "x_ptr=*fp32", "--target", target, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in " ".join(err.split()) and "Traceback" not in err
    assert not out.exists()  # refused before anything was compiled or written
    assert ladder_main(["diagnose", f"{kernel}:k", "--arg", "x_ptr=*fp32", "--target", target]) == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_an_unbuildable_gpu_of_this_machine_is_refused_saying_where_the_target_came_from(tmp_path, capsys, monkeypatch):
    """Without --target a suite diagnoses for this machine's GPU; one Triton cannot build for is refused up front,
    naming it as the machine's and the flag that picks another."""
    import ladder.runner
    from irscope.targets import parse_target

    monkeypatch.setattr(ladder.runner, "local_target", lambda: parse_target("hip:gfx801"))
    assert ladder_main(["suite", "--ops", "softmax", "--offline", "--rounds", "1", "--out", str(tmp_path / "run")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "no ISA family for gfx801" in err and "(this machine's GPU; give --target to diagnose for another)" in err
