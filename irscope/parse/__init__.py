"""Parsing captured text: MLIR ops with resolved locations; PTX/SASS/AMDGCN instructions with line tables."""

from irscope.parse.asm import Instr, parse_amdgcn, parse_ptx, parse_sass
from irscope.parse.locations import Frame, Location, LocationTable
from irscope.parse.mlir import Op, ParsedModule, op_counts, parse_mlir

__all__ = [
    "Frame",
    "Instr",
    "Location",
    "LocationTable",
    "Op",
    "ParsedModule",
    "op_counts",
    "parse_amdgcn",
    "parse_mlir",
    "parse_ptx",
    "parse_sass",
]
