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


def pack(text: str | None) -> bytes | None:
    """``text`` as stored (``None`` stays ``None``)."""
    if text is None:
        return None
    squeeze = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, zdict=DICTIONARY_V1)
    return bytes((_V1,)) + squeeze.compress(text.encode("utf-8")) + squeeze.flush()


def unpack(value: str | bytes | None) -> str | None:
    """A stored value as text: a BLOB this module packed, or TEXT written before it was."""
    if value is None or isinstance(value, str):
        return value
    data = bytes(value)
    if not data or data[0] != _V1:
        raise ValueError(f"packed text of unknown format {data[:1]!r}")
    expand = zlib.decompressobj(_WBITS, zdict=DICTIONARY_V1)
    return (expand.decompress(data[1:]) + expand.flush()).decode("utf-8")
