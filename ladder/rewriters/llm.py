"""An LLM rewriter over any OpenAI-compatible chat-completions endpoint, through the `openai` client.

Endpoint, key and model: `--base-url` (else OPENAI_BASE_URL), OPENAI_API_KEY, `--llm MODEL`. HTTP 429 and 5xx
are retried by the client (`--http-retries`, honouring Retry-After); a reply that is not exactly one usable
module is answered with the parse error and asked again, at most `--attempts` times in all. Each request's
token usage and outcome is kept in the round record (records.Attempt); the transcript goes to the round's
directory (llm-transcript.json).
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any

from ladder.records import Attempt, Rewrite
from ladder.rewriters.base import Rewriter, RewriteRequest, RewriterUnavailable, unified_diff
from ladder.rewriters.extract import ReplyError, parse_reply
from ladder.rewriters.prompt import build_messages, correction

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

DEFAULT_ATTEMPTS = 3
DEFAULT_HTTP_RETRIES = 4
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _chat(message: dict[str, str]) -> ChatCompletionMessageParam:
    """A role/content message (as the prompt and the transcript keep them) as the client's typed message."""
    match message["role"]:
        case "system":
            return {"role": "system", "content": message["content"]}
        case "user":
            return {"role": "user", "content": message["content"]}
        case "assistant":
            return {"role": "assistant", "content": message["content"]}
    raise ValueError(f"unknown chat role {message['role']!r}")


class LLMRewriter(Rewriter):
    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        attempts: int = DEFAULT_ATTEMPTS,
        http_retries: int = DEFAULT_HTTP_RETRIES,
        timeout_s: float = 600,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ):
        if attempts < 1:
            raise ValueError(f"attempts must be ≥ 1, got {attempts}")
        import openai  # imported here: the GPU machine and offline runs need the ladder without the client

        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ValueError("no API key: set OPENAI_API_KEY (any non-empty value for an endpoint without auth)")
        self.model, self.attempts = model, attempts
        self.temperature, self.max_tokens = temperature, max_tokens
        self.client = openai.OpenAI(
            api_key=key,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
            max_retries=http_retries,
            timeout=timeout_s,
        )

    @property
    def name(self) -> str:
        return f"llm:{self.model}"

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> LLMRewriter:
        return cls(
            args.llm,
            base_url=args.base_url,
            attempts=args.attempts,
            http_retries=args.http_retries,
            temperature=args.temperature,
            max_tokens=args.max_tokens,
        )

    def _ask(self, messages: list[dict[str, str]]) -> tuple[str, str | None, dict[str, int]]:
        import openai

        extra: dict[str, Any] = {}
        if self.temperature is not None:
            extra["temperature"] = self.temperature
        if self.max_tokens is not None:
            extra["max_tokens"] = self.max_tokens
        try:
            resp = self.client.chat.completions.create(model=self.model, messages=[_chat(m) for m in messages], **extra)
        except openai.APIStatusError as e:
            raise RewriterUnavailable(
                f"{self.name}: HTTP {e.status_code} from {self.client.base_url} after retries: {e.message}"
            ) from e
        except openai.APIError as e:  # connection refused, timeout, unreadable response
            raise RewriterUnavailable(f"{self.name}: no usable response from {self.client.base_url}: {e}") from e
        usage = {k: int(getattr(resp.usage, k, 0) or 0) for k in _USAGE_KEYS} if resp.usage else {}
        if not resp.choices:
            return "", None, usage
        choice = resp.choices[0]
        return choice.message.content or "", choice.finish_reason, usage

    def rewrite(self, request: RewriteRequest) -> Rewrite:
        messages = build_messages(request)
        attempts: list[Attempt] = []
        family = request.diagnosis.family.name if request.diagnosis and request.diagnosis.family else None
        try:
            for _ in range(self.attempts):
                text, finish, usage = self._ask(messages)
                messages.append({"role": "assistant", "content": text})
                try:
                    module = parse_reply(text, finish)
                except ReplyError as e:
                    attempts.append(Attempt(str(e), usage, finish))
                    messages.append({"role": "user", "content": correction(str(e))})
                    continue
                attempts.append(Attempt(None, usage, finish))
                return Rewrite(
                    self.name,
                    family,
                    module.description,
                    module.source,
                    unified_diff(request.base_source, module.source),
                    tuple(attempts),
                )
            return Rewrite(
                self.name, family, f"no usable module after {len(attempts)} attempts", "", "", tuple(attempts)
            )
        finally:
            request.workdir.mkdir(parents=True, exist_ok=True)
            (request.workdir / "llm-transcript.json").write_text(json.dumps(messages, indent=1))
