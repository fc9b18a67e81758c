"""The rewriters registry: name → Rewriter class. `--llm MODEL` picks "llm" (an OpenAI-compatible endpoint);
`--offline` picks "offline" (the mechanical pattern appliers of patterns.appliers, ladder/rewriters/offline.py).
"""

from __future__ import annotations

import argparse

from irscope.argtypes import non_negative, number, positive
from ladder.rewriters.base import Rewriter, RewriteRequest, RewriterUnavailable
from ladder.rewriters.llm import DEFAULT_ATTEMPTS, DEFAULT_HTTP_RETRIES, LLMRewriter
from ladder.rewriters.offline import OfflineRewriter
from patterns.appliers.tune_search import MAX_SPACE

REWRITERS: dict[str, type[Rewriter]] = {"llm": LLMRewriter, "offline": OfflineRewriter}

__all__ = ["REWRITERS", "RewriteRequest", "Rewriter", "RewriterUnavailable", "add_arguments", "from_args"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--llm", metavar="MODEL", help="rewrite with this model over an OpenAI-compatible endpoint")
    g.add_argument("--offline", action="store_true", help="rewrite with the mechanical pattern appliers")
    p.add_argument("--base-url", help="chat-completions endpoint (default: $OPENAI_BASE_URL); key: $OPENAI_API_KEY")
    p.add_argument(
        "--attempts",
        type=positive,
        default=DEFAULT_ATTEMPTS,
        help="requests per round when replies are malformed (default %(default)s)",
    )
    p.add_argument(
        "--http-retries",
        type=non_negative,
        default=DEFAULT_HTTP_RETRIES,
        help="retries of one request on HTTP 429/5xx (default %(default)s)",
    )
    p.add_argument(
        "--temperature", type=number(0, 2), help="sampling temperature for --llm, 0 to 2 (default: the endpoint's)"
    )
    p.add_argument("--max-tokens", type=positive, help="reply length limit for --llm (default: the endpoint's)")
    p.add_argument(
        "--tune-configs",
        type=positive,
        default=MAX_SPACE,
        help="configs a --offline tuning search compiles per round (default %(default)s; each is a full compile)",
    )


def from_args(args: argparse.Namespace) -> Rewriter:
    name = "offline" if args.offline else "llm"
    cls = REWRITERS.get(name)
    if cls is None:
        raise ValueError(f"no {name!r} rewriter in this build (rewriters: {', '.join(REWRITERS)})")
    return cls.from_args(args)
