"""The long text columns of the SQLite store, kept deflated (issue 20, footprint).

A run's record (``runs.record_json``), an episode's body (``episodes.episode_json``) and its
rendered text (``episodes.text``) are most of a store's bytes, and each is a few hundred bytes
to a few kilobytes of JSON or ``key: value`` lines: deflate halves them, more with a preset
dictionary of the words every one of them repeats (the field names). They are stored as
BLOBs; a TEXT value is a row written before this module, read as it is, so no migration has
to rewrite a store.

The first byte names the format, so a later dictionary can be added beside this one without
touching stored rows. :data:`DICTIONARY_V1` must never change: rows packed with it could no
longer be read.

Format 2 packs a text against another one it repeats, the row's episode body: the words of an
episode's rendering and of what the text index holds of it are nearly all in its body, so
with the body as deflate's preset dictionary (after :data:`DICTIONARY_V1`) each is a few dozen
bytes of back-references (:func:`pack_against`). Such a value can only be read beside the very
body it was packed against, so whatever changes or drops a body first packs its dependants
again (the store's ``update_episode_body`` and ``tombstone_episode``).
"""

from __future__ import annotations

import zlib

#: Format 1: raw deflate (no zlib header: the format byte says what follows) with
#: :data:`DICTIONARY_V1` preset. Deflate looks back at most 32 KiB, and uses the dictionary's
#: end best, so the commonest words come last.
_V1 = 1
DICTIONARY_V1 = (
    b'"spawned": true, "trigger": "schedule", "version": 1, "cost": {"source": "reported",'
    b' "usd": "model": {"served": "args": {"path": "name": "read", "type": "tool_call"},'
    b' {"error_class": "test_failure", "passed": false, "type": "verify"},'
    b' {"path": "type": "edit"}, "sessions": [{"branch": "cwd": "events": [ "id": "s1",'
    b' "prompt": "result_text": "ended_at": "started_at": "trace_id": "run_id": "outcome":'
    b' "succeeded", "failed", "reason": "pull_request": "https://github.com/'
    b"episode_id: agent: adapter: run_id: trace_id: model: repo: branch: outcome: reason:"
    b" started_at: duration_ms: cost_usd: cost_source: files_touched: pull_request:"
    b" verify_failures: result_excerpt: summary: trust_class: standard scope: project:"
    b' {"episode_id": "ep_", "agent": "adapter": "claude-code", "run_id": "run-", "trace_id":'
    b' "model": "repo": "github.com/", "branch": "outcome": "reason": "started_at": "20'
    b' "duration_ms": "cost_usd": "cost_source": "reported", "files_touched": ["src/'
    b' "pull_request": "verify_failures": [{"error_class": "count": "result_excerpt": "'
    b' "summary": null, "trust_class": "standard", "scope": "project:github.com/'
)
_LEVEL = 6
_WBITS = -15  # raw deflate


_AGAINST = 2
#: Deflate looks back 32 KiB: a longer base only lends its end.
_WINDOW = 32 * 1024


def _dictionary(base: str) -> bytes:
    return (DICTIONARY_V1 + base.encode("utf-8"))[-_WINDOW:]


def pack_against(text: str | None, base: str | None) -> bytes | None:
    """``text`` as stored beside ``base`` (format 2); with no base, as :func:`pack` does."""
    if text is None or base is None:
        return pack(text)
    plain = text.encode("utf-8")
    squeeze = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, zdict=_dictionary(base))
    # The CRC of the text makes a read against the wrong base an error, not wrong words.
    check = zlib.crc32(plain).to_bytes(4, "little")
    return bytes((_AGAINST,)) + check + squeeze.compress(plain) + squeeze.flush()


def pack(text: str | None) -> bytes | None:
    """``text`` as stored (``None`` stays ``None``)."""
    if text is None:
        return None
    squeeze = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, zdict=DICTIONARY_V1)
    return bytes((_V1,)) + squeeze.compress(text.encode("utf-8")) + squeeze.flush()


def unpack(value: str | bytes | None, against: str | None = None) -> str | None:
    """A stored value as text: a BLOB this module packed, or TEXT written before it was.

    ``against`` is the base a format-2 value was packed against (ignored by the others).
    """
    if value is None or isinstance(value, str):
        return value
    data = bytes(value)
    if not data or data[0] not in (_V1, _AGAINST):
        raise ValueError(f"packed text of unknown format {data[:1]!r}")
    if data[0] == _V1:
        expand = zlib.decompressobj(_WBITS, zdict=DICTIONARY_V1)
        return (expand.decompress(data[1:]) + expand.flush()).decode("utf-8")
    if against is None:
        raise ValueError("packed text needs the body it was packed against, and has none")
    expand = zlib.decompressobj(_WBITS, zdict=_dictionary(against))
    try:
        plain = expand.decompress(data[5:]) + expand.flush()
    except zlib.error:  # back-references into another body can point anywhere
        plain = None
    if plain is None or len(data) < 5 or zlib.crc32(plain) != int.from_bytes(data[1:5], "little"):
        raise ValueError("packed text was packed against another body than the one given")
    return plain.decode("utf-8")


def repack(value: str | bytes | None, old: str | None, new: str | None) -> bytes | None:
    """A stored value packed against ``old`` as it must be stored beside ``new`` instead."""
    return pack_against(unpack(value, old), new)
