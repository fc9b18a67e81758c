"""Every tool failure reaches the agent as an MCP error result with a one-line reason, never as a crash of the
server: `guarded` turns what a tool raises into a ToolError whose text is the reason."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from pydantic import ValidationError

from mcp_server.bounds import first_line

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("irscope.mcp")


def reason(e: BaseException) -> str:
    """What went wrong, on one line: the error's own message (a KeyError's key text, not its repr)."""
    text = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
    return first_line(str(text)) or type(e).__name__


def validation_reason(e: ValidationError) -> str:
    """A pydantic argument error as `field: message; field: message`."""
    parts = [f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in e.errors()]
    return first_line("; ".join(parts), 400)


def guarded(fn: F) -> F:
    """`fn`, whose exceptions become ToolErrors with a one-line reason; unexpected ones are logged in full."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except (ValueError, LookupError, OSError, RuntimeError) as e:  # the project's clear errors derive from these
            raise ToolError(reason(e)) from e
        except Exception as e:
            log.exception("tool %s failed", fn.__name__)
            raise ToolError(f"internal error {type(e).__name__}: {reason(e)}") from e

    return wrapper  # type: ignore[return-value]


def guarded_resource(fn: F) -> F:
    """`fn`, whose exceptions become resource errors with a one-line reason (the SDK would hide it)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ResourceError:
            raise
        except (ValueError, LookupError, OSError) as e:
            raise ResourceNotFoundError(reason(e)) from e
        except Exception as e:
            log.exception("resource %s failed", fn.__name__)
            raise ResourceError(f"internal error {type(e).__name__}: {reason(e)}") from e

    return wrapper  # type: ignore[return-value]
