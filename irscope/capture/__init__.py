"""Capture: a real Triton compile, the IR after every pass, as data."""

from irscope.capture.api import CompileError, Recording, capture, capture_request, record
from irscope.capture.specialize import SpecError, TensorSpec, build_request, parse_value
from irscope.capture.stub_driver import cpu_driver, dry_run_driver

__all__ = [
    "CompileError",
    "Recording",
    "SpecError",
    "TensorSpec",
    "build_request",
    "capture",
    "capture_request",
    "cpu_driver",
    "dry_run_driver",
    "parse_value",
    "record",
]
