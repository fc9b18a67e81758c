"""tritonparse traces ↔ trajectories: `export` writes trajectories as a trace tritonparse's parser and viewer read,
`import_trace` turns each compilation of a trace into a trajectory (docs/tritonparse.md)."""

from irscope.interop.tritonparse.exporter import export
from irscope.interop.tritonparse.importer import ImportResult, import_trace
from irscope.interop.tritonparse.reader import TraceError

__all__ = ["ImportResult", "TraceError", "export", "import_trace"]
