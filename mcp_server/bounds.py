"""Answers sized for an agent's context: every list is a page (offset, limit, total, next_offset), every nested
list and long string is cut with a marker saying how much was left out, so no tool answers with a 700-line dump.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field

T = TypeVar("T")

MAX_LIMIT = 200  # items (or IR lines) per page, whatever the tool
NESTED = 6  # items kept of a list inside an item
TEXT = 600  # characters kept of a string inside an item

Offset = Annotated[int, Field(ge=0, description="first item of the page (0-based); the previous answer's next_offset")]


def per_page(default: int, most: int = MAX_LIMIT) -> Any:
    """A `limit` parameter: `default` items per page, at most `most`."""
    return Field(default, ge=1, le=most, description=f"items per page (at most {most})")


class PageInfo(BaseModel):
    total: int = Field(description="items in all pages")
    offset: int
    next_offset: int | None = Field(description="offset of the next page; null on the last")


def page(items: Sequence[T], offset: int, limit: int) -> tuple[list[T], PageInfo]:
    """One page of `items` and where the next one starts."""
    chunk = list(items[offset : offset + limit])
    end = offset + len(chunk)
    return chunk, PageInfo(total=len(items), offset=offset, next_offset=end if end < len(items) else None)


def clip(text: str, most: int = TEXT) -> str:
    return text if len(text) <= most else f"{text[:most]}… [{len(text) - most} more characters]"


def first_line(text: str, most: int = 300) -> str:
    """A message's first non-empty line, clipped: an error's one-line reason."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return clip(line, most)


def trim(value: Any, items: int = NESTED, text: int = TEXT) -> Any:
    """JSON-ready `value` with every list cut to `items` (a last string says how many more) and every string to
    `text` characters, at every depth."""
    if isinstance(value, dict):
        return {k: trim(v, items, text) for k, v in value.items()}
    if isinstance(value, list | tuple):
        kept = [trim(v, items, text) for v in value[:items]]
        return kept + ([f"… {len(value) - items} more"] if len(value) > items else [])
    if isinstance(value, str):
        return clip(value, text)
    return value
