"""Bundled example kernels with the arguments to specialize them: the demo, the tests and the benchmarks use them."""

from irscope.examples.registry import EXAMPLES, Example, get_example

__all__ = ["EXAMPLES", "Example", "get_example"]
