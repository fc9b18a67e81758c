"""Triton 3.6's interpreter with NumPy ≥ 2.4: make runtime loop bounds work again.

The interpreter holds every scalar kernel argument as a one-element array and gives its tensors
`__index__ = int(handle.data)`. NumPy 2.4 turned `int()` of an array with ndim > 0 into a TypeError, so any
`for i in range(0, n, BLOCK)` over a runtime `n` fails under TRITON_INTERPRET=1 ("only 0-dimensional arrays can
be converted to Python scalars"). `install()` wraps the interpreter's tensor patching to use `.item()`, which
accepts a one-element array of any rank, on every NumPy version. Compiled (GPU) kernels are unaffected.
"""

from __future__ import annotations

_installed = False


def install() -> None:
    """Idempotent; call before the first interpreted launch."""
    global _installed
    if _installed:
        return
    from triton.runtime import interpreter

    original = interpreter._patch_lang_tensor

    def patch_lang_tensor(tensor, scope) -> None:
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.item()))

    interpreter._patch_lang_tensor = patch_lang_tensor
    _installed = True
