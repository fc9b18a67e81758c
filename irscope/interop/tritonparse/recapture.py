"""A traced kernel captured again, per pass, on this machine: the `irscope dump` that the trace's own source and
specialization state, and how its stage outputs compare with the trace's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from irscope.capture import CompileError, SpecError, capture_request
from irscope.capture.loader import KernelLoadError, load_kernel
from irscope.capture.specialize import build_request
from irscope.interop.tritonparse.format import STAGES, is_full_file, is_placeholder
from irscope.interop.tritonparse.restate import Restated
from irscope.report.irlines import debug_mask
from irscope.store import OutputDirError
from irscope.targets import TargetError


def passes_directory(directory: Path) -> Path:
    """Where the per-pass capture of the stage-level trajectory in `directory` goes: beside it."""
    return directory.with_name(f"{directory.name}.passes")


def dump_arguments(
    restated: Restated, src: dict[str, Any] | None, sources: Path, out: Path
) -> tuple[list[str] | None, str | None]:
    """(`irscope dump` arguments that capture the kernel into `out`, None) or (None, why there are none). A kernel
    file written from the trace goes into the folder `sources`."""
    if restated.why_not or not src:
        return None, restated.why_not or "the trace holds no Python source for it"
    kernel_file = _kernel_file(src, sources)
    if isinstance(kernel_file, str):
        return None, kernel_file
    return ["dump", f"{kernel_file}:{restated.kernel}", *restated.arguments(), "--out", str(out)], None


def _kernel_file(src: dict[str, Any], sources: Path) -> Path | str:
    """The kernel's own file where it is on this machine unchanged; else one written from the trace's source; or
    why neither can be."""
    code: str = src["code"]
    start = src.get("start_line", 1)
    original = Path(str(src.get("file_path", "")))
    try:
        here = original.read_text() if original.is_file() else None
    except (OSError, UnicodeDecodeError):
        here = None
    if here is not None:
        end = src.get("end_line", start + code.count("\n"))
        if here == code or "".join(here.splitlines(keepends=True)[start - 1 : end]) == code:
            return original
    if is_full_file(src):
        text = code
    elif start >= 2:  # the function only: Triton's names on the first of the lines before it, so lines stay put
        text = "import triton; import triton.language as tl\n" + "\n" * (start - 2) + code
    else:
        return "the trace holds the function only, from line 1: no room for its imports"
    # under the original's name, in a folder of its own: then only the folder differs in the compiled code's paths
    path = sources / (original.name or "kernel.py")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def capture_again(argv: list[str], restated: Restated, record: dict[str, Any]) -> tuple[Path | None, str]:
    """Run the stated `irscope dump` (`argv`); (its trajectory's directory, whether its stages are the trace's)."""
    ref, out = argv[1], Path(argv[-1])
    args, options = restated.values()
    try:
        traj = capture_request(build_request(load_kernel(ref), args, options, restated.target), out_dir=out)
    except (KernelLoadError, SpecError, TargetError, OutputDirError) as e:
        return None, f"not captured: {e}"
    except CompileError as e:
        return out, f"the compile failed here: {str(e).splitlines()[0]}"
    payload = record["payload"]
    contents = payload["file_content"]
    original = str(payload.get("python_source", {}).get("file_path", ""))
    same, moved, differ = [], [], []
    for s in STAGES:
        theirs = contents.get(f"{restated.kernel}{s.extension}")
        if theirs is None or is_placeholder(theirs) or s.stage not in traj.stages:
            continue
        ours = traj.stage_output(s.stage).text
        if ours == theirs:
            same.append(s.name)
        elif original and _code(s.kind, ours, traj.kernel.source_file, original) == _code(s.kind, theirs, "", ""):
            moved.append(s.name)
        else:
            differ.append(s.name)
    parts = []
    if same:
        parts.append(f"identical to the trace's: {', '.join(same)}")
    if moved:
        parts.append(f"identical but for the kernel file's path (in locations, debug info): {', '.join(moved)}")
    if differ:
        parts.append(
            f"different from the trace's: {', '.join(differ)} (another Triton, source or option than the traced "
            "compile: the per-pass capture describes this machine's compile)"
        )
    return out, "; ".join(parts)


def _code(kind: str, text: str, ours: str, theirs: str) -> list[str]:
    """The code lines of `text` (debug information left out: PTX's DWARF spells the file's path out in bytes) with
    kernel file `ours`'s folder named as `theirs`'s."""
    if ours:
        text = text.replace(str(Path(ours).parent), str(Path(theirs).parent))
    lines = text.split("\n")
    return [line for line, debug in zip(lines, debug_mask(kind, lines)) if not debug]
