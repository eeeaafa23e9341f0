"""The JSON a Claude Code UserPromptSubmit hook prints (standard library only, so a hook's
fallback answer can be written without importing the service layer)."""

from __future__ import annotations

import json
from typing import Any


def prompt_answer(message: str, facts: str = "", *, for_model: str = "") -> str:
    """A UserPromptSubmit answer: ``message`` (what was remembered) shown to the person, the
    same news for the agent (``for_model``, with stored words fenced; else ``message``), and
    the fenced ``facts`` block for this prompt handed to the agent."""
    context = []
    if message:
        context.append(
            (for_model or message)
            + "\n(Confirm this to the user in one line, quoting the stored wording.)"
        )
    if facts:
        context.append(facts)
    answer: dict[str, Any] = {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "\n\n".join(context),
        }
    }
    if message:
        answer["systemMessage"] = message
    return json.dumps(answer)
