"""`make demo`: irscope's capture summaries of the bundled examples, then the diagnosis ladder on the running example
of "Compiler-Grounded Hierarchical Diagnosis for LLM-Based Triton Kernel Optimization" (arXiv 2607.23089), the MoE
group top-2 operator, from L1 through L4 (`ladder diagnose moe_group_top2 --through L4`).

L4 reads the compiler index out/compiler-index.db; when it is absent and Triton's sources are in
third_party/triton, it is built first (a few seconds); with neither, L4 reports itself unavailable and says how
to get the sources (third_party/README.md).
"""

from __future__ import annotations

import sys

from irscope import demo as irscope_demo
from ladder.cli import main as ladder_main

OP = "moe_group_top2"


def main(out_root: str = "out/demo") -> int:
    rc = irscope_demo.main(out_root)
    irscope_demo.console.rule(
        f"[bold]ladder diagnose {OP} --through L4[/bold]: the running example of arXiv 2607.23089, "
        '"Compiler-Grounded Hierarchical Diagnosis for LLM-Based Triton Kernel Optimization"'
    )
    sys.stdout.flush()
    return rc or ladder_main(["diagnose", OP, "--through", "L4", "--out", f"{out_root}/diagnose/{OP}"])


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
