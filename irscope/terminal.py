"""The consoles irscope's commands print to (`irscope`, and its `import`/`export` in irscope/interop): wide tables
when piped, since pass names are long and truncating them hides the point."""

from __future__ import annotations

import sys

from rich.console import Console

console = Console(width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)
