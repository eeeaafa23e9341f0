"""Episode assembly: a closed run record in, one bounded, code-built episode out.

No model takes part. The episode holds exactly the fields below, in this order, and its
plain-text rendering lists them one per line so a provider that indexes only text needs
no schema knowledge. Identical inputs give byte-identical episodes and renderings.

Nothing from the prompt, the trigger payload, tool arguments or the transcript reaches an
episode except ``result_excerpt``, the first ``excerpt_chars`` characters of the result.
Redaction happens here too, so the only way to build an episode is the safe one.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from fleetmem.core.redact import redact
from fleetmem.core.runrecord import RunRecord, Session, TrustClass
from fleetmem.core.scope import project_scope, relativize

#: The field order of an episode and of its text rendering.
FIELDS: tuple[str, ...] = (
    "episode_id",
    "agent",
    "adapter",
    "run_id",
    "trace_id",
    "model",
    "repo",
    "branch",
    "outcome",
    "reason",
    "started_at",
    "duration_ms",
    "cost_usd",
    "cost_source",
    "files_touched",
    "pull_request",
    "verify_failures",
    "result_excerpt",
    "summary",
    "trust_class",
    "scope",
)

LABEL_MAX_BYTES = 256
MAX_FILES = 50
MAX_VERIFY_CLASSES = 10
SUMMARY_MAX_CHARS = 280

SkipReason = Literal["not_spawned", "no_repository", "opted_out", "trace_off"]


@dataclass(frozen=True, slots=True)
class SessionRepo:
    """Where a session ran, as resolved by the service from its cwd (or given by the harness)."""

    key: str
    root: str | None
    branch: str | None
    #: The session's cwd with symlinks resolved, so it compares with the real root git reports.
    real_cwd: str | None = None


@dataclass(frozen=True, slots=True)
class Episode:
    episode_id: str
    agent: str
    adapter: str
    run_id: str
    trace_id: str | None
    model: str | None
    repo: str
    branch: str | None
    outcome: str
    reason: str
    started_at: str
    duration_ms: int
    cost_usd: float | None
    cost_source: str
    files_touched: tuple[str, ...]
    pull_request: str | None
    verify_failures: tuple[tuple[str, int], ...]
    result_excerpt: str
    summary: str | None
    trust_class: TrustClass
    scope: str

    def to_dict(self) -> dict[str, Any]:
        """The episode as the JSON object sent to providers, in field order."""
        out: dict[str, Any] = {}
        for name in FIELDS:
            value = getattr(self, name)
            if name == "files_touched":
                value = list(value)
            elif name == "verify_failures":
                value = [{"error_class": c, "count": n} for c, n in value]
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Episode:
        """Inverse of :meth:`to_dict`, for episodes read back from the store."""
        values: dict[str, Any] = {name: data.get(name) for name in FIELDS}
        values["files_touched"] = tuple(values["files_touched"] or ())
        values["verify_failures"] = tuple(
            (str(v["error_class"]), int(v["count"])) for v in values["verify_failures"] or ()
        )
        return cls(**values)

    def with_summary(self, summary: str | None) -> Episode:
        """A copy carrying a (re-redacted, capped) summary; None clears it."""
        if summary is None:
            return replace(self, summary=None)
        cleaned = _one_line(redact(summary))[:SUMMARY_MAX_CHARS]
        return replace(self, summary=cleaned or None)


def episode_id(agent: str, run_id: str, started_at: datetime) -> str:
    """``ep_`` + 20 hex of SHA-256 over agent, run id and start time (NUL-separated)."""
    material = "\x00".join((agent, run_id, _iso(started_at))).encode("utf-8")
    return "ep_" + hashlib.sha256(material).hexdigest()[:20]


def primary_session(record: RunRecord) -> Session | None:
    """The run's first session that is not a subagent's."""
    return next((s for s in record.sessions if not s.is_subagent), None)


def skip_reason(
    record: RunRecord,
    repos: Mapping[str, SessionRepo],
    *,
    memory_record: bool,
    record_trace: bool,
) -> SkipReason | None:
    """Why no episode is recorded for this run, or None when one is."""
    if not record_trace:
        return "trace_off"
    if not memory_record:
        return "opted_out"
    if not record.spawned:
        return "not_spawned"
    primary = primary_session(record)
    if primary is None or primary.id not in repos:
        return "no_repository"
    return None


def assemble(
    record: RunRecord,
    repos: Mapping[str, SessionRepo],
    *,
    excerpt_chars: int,
    untrusted_inline: bool,
    linked_pull_request: str | None = None,
) -> Episode:
    """Build the episode of an eligible run (see :func:`skip_reason`).

    ``repos`` maps session id to the repository that session ran in; sessions missing from
    it ran outside any repository. ``linked_pull_request`` is the pull request an earlier run
    on the same branch recorded; it stands in when this run's record names none.
    """
    primary = primary_session(record)
    if primary is None or primary.id not in repos:
        raise ValueError("assemble() needs a run whose primary session is in a repository")
    home = repos[primary.id]

    files: set[str] = set()
    failures: Counter[str] = Counter()
    for session in record.sessions:
        where = repos.get(session.id)
        # Work done in another repository belongs to that repository, not this episode.
        if where is None or where.key != home.key:
            continue
        for edit in session.edits:
            rel = _relative(edit.path, where, session.cwd)
            if rel is not None:
                files.add(_label(rel, 4096))
        for verify in session.verifies:
            if not verify.passed:
                failures[_label(verify.error_class)] += 1

    top_failures = sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_VERIFY_CLASSES]
    trust: TrustClass = (
        "untrusted_input" if record.externally_triggered or untrusted_inline else "standard"
    )
    return Episode(
        episode_id=episode_id(record.agent, record.run_id, record.started_at),
        agent=_label(record.agent),
        adapter=_label(record.adapter),
        run_id=_label(record.run_id),
        trace_id=_opt_label(record.trace_id),
        model=_opt_label(record.model),
        repo=_label(home.key),
        branch=_opt_label(home.branch),
        outcome=record.outcome,
        reason=record.reason,
        started_at=_iso(record.started_at),
        duration_ms=record.duration_ms,
        cost_usd=record.cost_usd,
        cost_source=record.cost_source,
        files_touched=tuple(sorted(files)[:MAX_FILES]),
        pull_request=_opt_label(record.pull_request or linked_pull_request, 2048),
        verify_failures=tuple(top_failures),
        result_excerpt=redact(record.result_text)[:excerpt_chars] if excerpt_chars else "",
        summary=None,
        trust_class=trust,
        scope=project_scope(home.key),
    )


def render_text(ep: Episode) -> str:
    """One ``field: value`` line per field, in :data:`FIELDS` order, newline-terminated.

    Line breaks inside values are folded to spaces so every field stays on one line and a
    value cannot forge another field's line.
    """
    lines = []
    for name in FIELDS:
        value = getattr(ep, name)
        if value is None:
            shown = ""
        elif name == "files_touched":
            shown = ", ".join(value)
        elif name == "verify_failures":
            shown = ", ".join(f"{cls}: {n}" for cls, n in value)
        elif name == "cost_usd":
            shown = f"{value:.6f}".rstrip("0").rstrip(".")
        else:
            shown = str(value)
        lines.append(f"{name}: {_one_line(shown)}")
    return "\n".join(lines) + "\n"


def content_hash(text: str) -> str:
    """SHA-256 of a rendering, the key under which its embedding is cached."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _relative(path: str, where: SessionRepo, cwd: str) -> str | None:
    if where.root is None:
        # A harness that named the repository without a checkout root can only give
        # paths that are already repository-relative.
        return relativize(path, "/", "/")
    return relativize(path, where.root, where.real_cwd or cwd)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _one_line(text: str) -> str:
    return " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text


def _label(text: str, max_bytes: int = LABEL_MAX_BYTES) -> str:
    """Redacted, single-line, and cut to ``max_bytes`` of UTF-8 without splitting a character."""
    clean = _one_line(redact(text))
    raw = clean.encode("utf-8")
    if len(raw) <= max_bytes:
        return clean
    return raw[:max_bytes].decode("utf-8", errors="ignore")


def _opt_label(text: str | None, max_bytes: int = LABEL_MAX_BYTES) -> str | None:
    return None if text is None else (_label(text, max_bytes) or None)
