"""Self-contained pages: a template with the shared stylesheet and script inlined, the data embedded as JSON
that no string inside it can break out of, IR texts gzip-compressed (the browser's DecompressionStream
inflates them), no network access."""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from pathlib import Path

HERE = Path(__file__).parent

# In JSON embedded in a <script> element, `<` could close the element (`</script>`) or open a comment state
# (`<!--<script>` swallows the rest of the page); `>` and `&` are escaped alike. ensure_ascii turns U+2028/2029
# (line terminators to older JavaScript parsers) into \u escapes. JSON has these characters only inside strings,
# where \u escapes mean the same.
_SCRIPT_UNSAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def script_json(data: object) -> str:
    """JSON that can sit inside `<script type="application/json">` whatever strings it carries."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=True).translate(_SCRIPT_UNSAFE)


def gz(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode(), compresslevel=6)).decode()


def fill(template: str, values: dict[str, str]) -> str:
    """Substitute `__NAME__` placeholders in one pass, so a value that contains another placeholder's name (a
    kernel called `__DATA__`) is left as it is."""
    return re.sub(r"__([A-Z]+)__", lambda m: values.get(m.group(1), m.group(0)), template)


def page(template: str, title: str, data: object) -> str:
    """The page `template` (a file beside this module) with its title, the shared CSS and JS, and `data`."""
    return fill(
        (HERE / template).read_text(),
        {
            "TITLE": html.escape(title),
            "CSS": (HERE / "page.css").read_text(),
            "COMMON": (HERE / "common.js").read_text(),
            "DATA": script_json(data),
        },
    )
