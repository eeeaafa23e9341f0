"""Workspaces: the pure rules for their names, ids and deletion (no I/O, no clock).

A workspace is a tenant: facts, context files (workspace files, agent files, project
notebooks), proposals and their activity belong to exactly one. Each has

* an **id**, fixed at creation: the value every workspace column holds, what tokens and web
  sessions are bound to, and what the API's paths carry. The workspace that existed before
  workspaces could be created is ``default``; a new one gets a slug of its first name and a
  random suffix (``acme-corp-3f9a1c``), so an id is never handed out twice and a token of a
  deleted workspace cannot come back to life in a new one;
* a **name**, what people see and type, which may change (rename). Names are compared by
  :func:`name_key`: case, compatibility forms, accents and look-alike letters of other
  scripts (Cyrillic ``е`` for Latin ``e``) and the choice of separator do not make two names
  different, so a switcher never shows two entries that read the same.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from fleetmem.core.confusables import reads_as
from fleetmem.core.facts import DEFAULT_WORKSPACE
from fleetmem.errors import InvalidInput

__all__ = [
    "DEFAULT_WORKSPACE",
    "DELETE_TOUCHES",
    "DELETE_UNTOUCHED",
    "MAX_NAME_CHARS",
    "MAX_WORKSPACES",
    "check_delete_confirmation",
    "clean_name",
    "name_key",
    "new_workspace_id",
]

#: The longest name, in characters after normalization.
MAX_NAME_CHARS: Final = 64
#: Workspaces one store holds at most (a switcher stays a list one can read).
MAX_WORKSPACES: Final = 200
#: The longest slug part of a new id (the id also carries ``-`` and six hex digits).
_SLUG_CHARS: Final = 40
_SUFFIX = re.compile(r"[0-9a-f]{6}")
_SEPARATORS: Final = frozenset(" -_.")
#: What deleting a workspace removes, and what it leaves alone (shown before confirming).
DELETE_TOUCHES: Final = (
    "Its facts (with their history, votes and exposures), its context files, agent files and "
    "project notebooks (with every revision), proposed Notes changes, its activity feed, and "
    "the API tokens bound to it are deleted for good: nothing can be restored."
)
DELETE_UNTOUCHED: Final = "Runs, episodes, other workspaces and the configuration are not affected."


def _problem_char(text: str) -> tuple[int, str] | None:
    """The first character a name may not hold: control, format (zero-width, bidi),
    surrogate, private-use, unassigned, or a line or paragraph separator."""
    for position, char in enumerate(text, start=1):
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") and char != " ":
            return position, char
    return None


def clean_name(value: object, field: str = "name") -> str:
    """A workspace name as stored: NFC, trimmed, runs of spaces made one space.

    Raises InvalidInput naming ``field`` for a non-string, an empty name, a name longer than
    :data:`MAX_NAME_CHARS`, one holding an invisible or control character (named by its code
    point: a bidi override or a zero-width space would make two names look alike), and one
    without any letter or digit.
    """
    if not isinstance(value, str):
        raise InvalidInput(field, type(value).__name__, "must be a string")
    bad = _problem_char(value)
    if bad is not None:
        position, char = bad
        raise InvalidInput(
            field,
            value,
            f"holds an invisible or control character (U+{ord(char):04X}) at position "
            f"{position}; type the name without it",
        )
    text = " ".join(unicodedata.normalize("NFC", value).split())
    if not text:
        raise InvalidInput(field, value, "must not be empty")
    if len(text) > MAX_NAME_CHARS:
        raise InvalidInput(
            field, value, f"is {len(text):,} characters long; at most {MAX_NAME_CHARS}"
        )
    if not any(char.isalnum() for char in text):
        raise InvalidInput(field, value, "must contain a letter or a digit")
    return text


def name_key(name: str) -> str:
    """What two names are compared by: equal keys read the same to a person.

    Compatibility forms are folded (full-width ``Ａ`` is ``a``), accents dropped, case folded,
    letters that look like Latin ones read as those (:func:`fleetmem.core.confusables.reads_as`)
    and every run of separators (space, ``-``, ``_``, ``.``) is one ``-``.
    """
    out: list[str] = []
    base = unicodedata.normalize("NFKD", name)
    for char in base:
        if unicodedata.combining(char):
            continue
        if char in _SEPARATORS or char.isspace():
            if out and out[-1] != "-":
                out.append("-")
            continue
        readings = reads_as(char)
        letters = sorted(r for r in readings if r.isalnum())
        out.append(letters[0] if letters else char.casefold())
    return "".join(out).strip("-")


def new_workspace_id(name: str, suffix: str) -> str:
    """The id of a new workspace named ``name``: an ASCII slug of the name (``ws`` when it
    has no ASCII letter or digit) and ``-`` and ``suffix``, six random hex digits the caller
    draws. Always matches the workspace column's pattern ``[a-z0-9][a-z0-9_-]{0,63}``."""
    if not _SUFFIX.fullmatch(suffix):
        raise ValueError("suffix must be six lower-case hex digits")
    slug = re.sub(r"[^a-z0-9]+", "-", name_key(name)).strip("-")[:_SLUG_CHARS].strip("-")
    return f"{slug or 'ws'}-{suffix}"


def check_delete_confirmation(name: str, confirm: object) -> None:
    """Deleting a workspace needs its name typed exactly (as Forget all needs FORGET ALL);
    anything else is an InvalidInput naming ``confirm`` that says what deleting does."""
    if confirm != name:
        raise InvalidInput(
            "confirm",
            confirm,
            f"type the workspace's name, {name}, exactly to delete it. {DELETE_TOUCHES} "
            f"{DELETE_UNTOUCHED}",
        )
