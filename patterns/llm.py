"""A chat-completions endpoint for LLM-assisted synthesis (any server speaking the OpenAI protocol).

Configured by a model name plus `OPENAI_BASE_URL` (or an explicit base URL) and `OPENAI_API_KEY`. Replies are
data: they are parsed as JSON and validated before anything is written; nothing in them is executed.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any


class LLMError(RuntimeError):
    """The endpoint failed or replied with something that is not the JSON object asked for."""


@dataclass(frozen=True)
class LLMConfig:
    model: str
    base_url: str
    api_key: str
    timeout_s: float = 120.0

    @classmethod
    def from_args(cls, model: str | None, base_url: str | None = None) -> LLMConfig | None:
        """None when no model is named; a model without an endpoint is a usage error."""
        if not model:
            return None
        url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not url:
            raise ValueError("--llm-model needs an endpoint: set OPENAI_BASE_URL or pass --llm-base-url")
        return cls(model, url, os.environ.get("OPENAI_API_KEY", "not-needed"))


def extract_json(text: str) -> dict[str, Any]:
    """The JSON object in a reply, with or without a ```json fence around it."""
    m = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.S)
    body = m.group(1) if m else text[text.find("{") : text.rfind("}") + 1]
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as e:
        raise LLMError(f"the reply is not a JSON object: {e.msg}; reply began {text[:200]!r}") from e
    if not isinstance(obj, dict):
        raise LLMError("the reply's JSON is not an object")
    return obj


def ask_json(config: LLMConfig, system: str, user: str) -> dict[str, Any]:
    from openai import OpenAI, OpenAIError

    client = OpenAI(base_url=config.base_url, api_key=config.api_key, timeout=config.timeout_s, max_retries=1)
    try:
        reply = client.chat.completions.create(
            model=config.model,
            temperature=0,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        )
    except OpenAIError as e:
        raise LLMError(f"chat completion at {config.base_url} failed: {e}") from e
    if not reply.choices or reply.choices[0].message.content is None:
        raise LLMError("the reply has no message content")
    return extract_json(reply.choices[0].message.content)
