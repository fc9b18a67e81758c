"""irscope: what Triton's compiler does to a kernel, pass by pass, as evidence.

import irscope
traj = irscope.capture(kernel, "*fp32", "*fp32", 4096, BLOCK=1024, target="cuda:90", out_dir="dump")
traj = irscope.load("dump")
"""

from irscope.capture import CompileError, TensorSpec, capture, record
from irscope.store import load, save
from irscope.targets import Target, parse_target
from irscope.trajectory import Snapshot, Trajectory
from irscope.version import __version__

__all__ = [
    "CompileError",
    "Snapshot",
    "Target",
    "TensorSpec",
    "Trajectory",
    "__version__",
    "capture",
    "load",
    "parse_target",
    "record",
    "save",
]
