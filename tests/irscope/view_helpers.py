"""A Triton helper in a file of its own: the kernel that calls it lives in tests/irscope/test_hazard_view.py, so
the helper's ops carry a frame in this file first and the kernel's call line second."""

import triton


@triton.jit
def doubled(x):
    return x * 2.0
