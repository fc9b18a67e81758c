"""Capture: a real Triton compile, the IR after every pass, as data."""

from irscope.capture.api import CompileError, Recording, capture, capture_request, record
from irscope.capture.specialize import SpecError, TensorSpec, build_request, parse_value

__all__ = ["CompileError", "Recording", "SpecError", "TensorSpec", "build_request", "capture", "capture_request",
           "parse_value", "record"]
