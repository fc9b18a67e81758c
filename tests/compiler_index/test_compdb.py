"""Compilation databases: both entry forms, the flags libclang gets, where one is found, and bad input; choosing the
backend (these need no libclang)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from compiler_index import compdb
from compiler_index.build import plan_backend
from compiler_index.sources import SourceError, source_root


def test_arguments_and_command_entries(tmp_path: Path):
    src = tmp_path / "src"
    (src / "lib").mkdir(parents=True)
    entries = [
        {
            "directory": str(tmp_path / "build"),
            "file": str(src / "lib/A.cpp"),
            "output": "A.o",
            "arguments": [
                "/usr/bin/c++",
                "-DX=1",
                "-I",
                "../src/include",
                "-std=c++17",
                "-MD",
                "-MT",
                "A.o",
                "-MF",
                "A.o.d",
                "-o",
                "A.o",
                "-c",
                str(src / "lib/A.cpp"),
            ],
        },
        {
            "directory": str(src),
            "file": "lib/B.cpp",
            "command": shlex.join(
                ["clang++", "-Iinclude", "-isystem", "/opt/mlir/include", "-oB.o", "-c", "lib/B.cpp"]
            ),
        },
        {"directory": str(src), "file": "lib/B.cpp", "arguments": ["c++", "-DSECOND", "lib/B.cpp"]},
    ]
    path = tmp_path / "compile_commands.json"
    path.write_text(json.dumps(entries))
    commands = compdb.load(path)
    a, b = commands[src / "lib/A.cpp"], commands[src / "lib/B.cpp"]
    # compiler, input, -c, -o and dependency-file flags go; the build directory becomes the working directory
    assert a.arguments == ("-working-directory", str(tmp_path / "build"), "-DX=1", "-I", "../src/include", "-std=c++17")
    assert b.arguments == ("-working-directory", str(src), "-Iinclude", "-isystem", "/opt/mlir/include")
    assert (a.file, b.directory) == (str(src / "lib/A.cpp"), str(src))  # a file listed twice keeps its first command
    assert a.key() != b.key()


def test_found_in_a_source_root_or_its_build_directory(tmp_path: Path):
    root = source_root(tmp_path)
    assert compdb.find([root]) is None
    (tmp_path / "build").mkdir()
    (tmp_path / "build/compile_commands.json").write_text("[]")
    assert compdb.find([root]) == tmp_path / "build/compile_commands.json"
    (tmp_path / "compile_commands.json").write_text("[]")
    assert compdb.find([root]) == tmp_path / "compile_commands.json"
    assert compdb.find([root], tmp_path / "build") == tmp_path / "build/compile_commands.json"  # a directory given


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"not a readable compilation database"),
        ('{"file": "a.cpp"}', r"a JSON list of commands, found dict"),
        ('[{"file": "a.cpp"}]', r"entry 0 lacks a \"file\" or \"directory\""),
        ('[{"file": "a.cpp", "directory": "/x"}]', r"entry 0 \(a.cpp\) has neither \"arguments\" nor \"command\""),
    ],
)
def test_bad_compilation_databases(tmp_path: Path, text: str, message: str):
    path = tmp_path / "compile_commands.json"
    path.write_text(text)
    with pytest.raises(compdb.CompileCommandsError, match=message):
        compdb.load(path)


def test_backend_choice_errors(tmp_path: Path):
    roots = [source_root(tmp_path)]
    with pytest.raises(SourceError, match=r"--compile-commands is for the libclang backend"):
        plan_backend("tree-sitter", roots, tmp_path)
    with pytest.raises(SourceError, match=r"unknown backend 'clang'.*tree-sitter, libclang, auto"):
        plan_backend("clang", roots)
    with pytest.raises(compdb.CompileCommandsError, match=r"no compilation database at .*EXPORT_COMPILE_COMMANDS"):
        plan_backend("libclang", roots, tmp_path / "nowhere.json")
    with pytest.raises(
        compdb.CompileCommandsError,
        match=r"needs a compilation database: none given and no "
        r"compile_commands.json or build/compile_commands.json",
    ):
        plan_backend("libclang", roots)
    assert plan_backend("tree-sitter", roots).backend == "tree-sitter"
    auto = plan_backend("auto", roots)  # nothing to read with libclang: tree-sitter, and why
    assert auto.backend == "tree-sitter" and "auto: tree-sitter" in auto.note
