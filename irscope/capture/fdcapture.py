"""Catch what native code writes to a file descriptor (MLIR diagnostics and ptxas logs go to fd 1/2, not sys.*)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


class FdCapture:
    """Redirects one file descriptor into a reusable temp file; `take()` returns what arrived since the last take.

    One temp file serves a whole capture, so redirecting around each of 70 passes costs microseconds. What is
    taken is not re-emitted: the caller decides what the user still sees.
    """

    def __init__(self, fd: int, limit: int = 1 << 20):
        self.fd = fd
        self.limit = limit
        self._tmp = tempfile.TemporaryFile(buffering=0)  # noqa: SIM115 - lives across many redirects; close()
        self._saved: int | None = None

    @contextmanager
    def redirect(self) -> Iterator[None]:
        stream = sys.stderr if self.fd == 2 else sys.stdout
        stream.flush()
        self._saved = os.dup(self.fd)
        os.dup2(self._tmp.fileno(), self.fd)
        try:
            yield
        finally:
            os.dup2(self._saved, self.fd)
            os.close(self._saved)
            self._saved = None

    def take(self) -> str:
        # The redirected descriptor shares the file offset with our temp file: read through raw fds.
        fd = self._tmp.fileno()
        size = os.lseek(fd, 0, os.SEEK_CUR)
        if size == 0:
            return ""
        data = os.pread(fd, size, 0)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        text = data.decode(errors="replace")
        if len(text) > self.limit:
            text = text[: self.limit] + f"\n[irscope: {len(text) - self.limit} more characters not kept]\n"
        return text

    def close(self) -> None:
        self._tmp.close()
