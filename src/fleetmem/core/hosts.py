"""Delivery profiles: how much of a run's context each host really takes at the start (pure).

A context that fits fleetmem's token budgets can still be too long for the way a host receives
it. Each profile names the mechanism and the limit that host applies, so the assembly can leave
whole parts out for the agent to pull (:func:`fleetmem.core.context.assemble`, ``fits``) rather
than let the host cut the text somewhere fleetmem cannot see:

- **Claude Code session** (hooks): a SessionStart hook's ``additionalContext`` arrives whole up
  to 10,000 UTF-16 code units (JavaScript string length); one unit more and the model is given
  a 2 KB preview and a file path instead. Measured with Claude Code 2.1.197 driven against a
  local stand-in model API, at the limit and one past it, in ASCII, two-byte and astral text
  (``tests/integrations/test_real_claude.py`` checks it against the CLI the tests install).
  The context shares the answer with the fenced briefing.
- **Codex session** (hooks): a SessionStart hook's ``additionalContext`` arrives whole up to
  10,000 UTF-8 bytes; past that Codex keeps about the first and last 5,000 characters with a
  "…N tokens truncated…" mark between, cutting the middle out unseen. Measured with Codex
  0.171.0 driven against a local stand-in for the Responses API, at the limit and one byte
  past it (``tests/integrations/test_real_codex.py``). It too shares the answer with the
  briefing.
- **Claude Code** and **Codex** under ``fleetmem run``: one command-line argument
  (``--append-system-prompt TEXT``; ``-c developer_instructions=TOML``), so the operating
  system's exec limits: on Linux 131,072 bytes per argument, its NUL included, and ``ARG_MAX``
  for everything together. The integration checks the real argv against the running system.
- **A plain command**: a file named by ``$FLEETMEM_CONTEXT_FILE``; no limit.

What is left out stays reachable: the parts' titles and how to read them are the last lines of
what the host is given (:func:`pull_note`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from fleetmem.core.context import SegmentResult

Unit = Literal["utf16", "bytes"]

#: Where an agent reads the parts of its context its host could not take.
CONTEXT_URI: Final = "fleetmem://memory/context"
#: Linux's per-argument exec limit (MAX_ARG_STRLEN), the terminating NUL included.
LINUX_ARGUMENT_BYTES: Final = 131_072


@dataclass(frozen=True, slots=True)
class HostProfile:
    key: str
    title: str
    mechanism: str
    #: The most ``unit``s the host takes whole; None: the OS's limits (argv) or none (file).
    limit: int | None
    unit: Unit
    #: The context shares the host's limit with the fenced briefing (a hook's one answer).
    shares_with_briefing: bool = False
    #: The context travels in one command-line argument (the exec limits count its bytes).
    argument: bool = False

    def size(self, text: str) -> int:
        return utf16_units(text) if self.unit == "utf16" else len(text.encode("utf-8"))

    def describe_limit(self) -> str:
        if self.limit is None:
            return "no limit" if self.mechanism == "file" else "the system's argument limit"
        unit = "characters" if self.unit == "utf16" else "bytes"
        return f"{self.limit:,} {unit}"


CLAUDE_CODE_SESSION: Final = HostProfile(
    "claude-code-session",
    "Claude Code session",
    "SessionStart additionalContext",
    10_000,
    "utf16",
    shares_with_briefing=True,
)
CODEX_SESSION: Final = HostProfile(
    "codex-session",
    "Codex session",
    "SessionStart additionalContext",
    10_000,
    "bytes",
    shares_with_briefing=True,
)
CLAUDE_CODE_RUN: Final = HostProfile(
    "claude-code",
    "Claude Code (fleetmem run)",
    "--append-system-prompt",
    None,
    "bytes",
    argument=True,
)
CODEX_RUN: Final = HostProfile(
    "codex", "Codex (fleetmem run)", "-c developer_instructions", None, "bytes", argument=True
)
COMMAND_RUN: Final = HostProfile("command", "A command (fleetmem run)", "file", None, "bytes")
PROFILES: Final = (CLAUDE_CODE_SESSION, CODEX_SESSION, CLAUDE_CODE_RUN, CODEX_RUN, COMMAND_RUN)


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: every control character escaped (DEL included)."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def argument_bytes(profile: HostProfile, text: str) -> int:
    """The bytes of the one argument that carries ``text`` to ``profile``'s CLI, its NUL
    included (what the per-argument exec limit counts)."""
    if profile.key == CODEX_RUN.key:
        return len(("developer_instructions=" + toml_string(text)).encode("utf-8")) + 1
    return len(text.encode("utf-8")) + 1


def utf16_units(text: str) -> int:
    """The length of ``text`` as JavaScript counts it: astral characters count two."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def pull_note(profile: HostProfile, titles: Sequence[str], tokens: int) -> str:
    """The block that ends a context some of whose parts were left out for ``profile``."""
    listed = ", ".join(titles)
    return (
        "## Not included above\n"
        f"{profile.title} takes at most {profile.describe_limit()} of context at the start, "
        f"so this was left out: {listed} ({tokens:,} tokens). Read it, with the rest of this "
        f"context, from the fleetmem MCP resource {CONTEXT_URI} when you need it.\n"
    )


@dataclass(frozen=True, slots=True)
class HostFit:
    """A host to fit a context to: its profile and the test of a text it takes whole."""

    profile: HostProfile
    fits: Callable[[str], bool]

    def note(self, withheld: Sequence[SegmentResult]) -> str:
        titles = [s.title if s.pulled else f"the rest of {s.title}" for s in withheld]
        return pull_note(self.profile, titles, sum(s.withheld_tokens for s in withheld))


def within(profile: HostProfile, room: int | None = None) -> HostFit:
    """Fit to ``profile``'s own limit (or to ``room`` of it, when something shares it)."""
    limit = profile.limit if room is None else room
    if limit is None:
        return HostFit(profile, lambda _text: True)
    return HostFit(profile, lambda text: profile.size(text) <= limit)


def argument_host(profile: HostProfile, limit: int) -> HostFit:
    """Fit to one exec argument of ``limit`` bytes (its NUL included) carrying the text to
    ``profile``'s CLI; the profile is given that limit so its note can name it."""
    return HostFit(
        replace(profile, limit=limit), lambda text: argument_bytes(profile, text) <= limit
    )
