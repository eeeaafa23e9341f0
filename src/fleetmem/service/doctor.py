"""``fleetmem doctor``: one row per thing that can be wrong, each ok, info, warn or fail.

The doctor only reads: it never repairs, records or forgets. A ``fail`` row means fleetmem
cannot do its job (the store cannot be opened, the provider is unusable); ``warn`` means work
is piling up or quality is reduced; ``note`` rows state facts an operator must know, such as
episodes leaving the machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from fleetmem.embed.health import describe_embedder
from fleetmem.errors import EmbeddingUnavailable, FleetmemError
from fleetmem.service.reembed import reembed_line
from fleetmem.store.sqlite.fts_upkeep import COMPACT_MIN_SEGMENTS, COMPACT_MIN_SHARE

Status = Literal["ok", "info", "note", "warn", "fail"]

#: Pending work older than this is worth a warning.
PENDING_WARN_S = 3600.0


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: Status
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


def run_checks(
    app: Any,
    *,
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
) -> list[Check]:
    """Every check against a wired App, in a stable order.

    ``clock`` times the embedder; ``wall`` is the UNIX time the 24-hour and outage windows
    are measured against.
    """
    now = wall()
    rows = [_config(app), _store(app), _embedder(app, clock)]
    status = app.memory.status()
    rows.extend(_provider(app, status, wall=now))
    rows.extend(_work(status))
    rows.append(_degraded_recalls(app, now))
    rows.append(_vectors(status))
    rows.append(_text_index(status))
    rows.append(_summaries(status))
    rows.append(_briefing_agents(app))
    rows.append(_capture_model())
    return rows


def _capture_model() -> Check:
    """Whether requests to remember are read by the rules and the learned model, or the
    rules alone (its weights changed by hand)."""
    from fleetmem.core.capture_learned import ModelError, default_model

    try:
        default_model()
    except ModelError as exc:
        return Check("capture", "warn", f"rules only, fewer requests to remember are heard: {exc}")
    return Check("capture", "ok", "rules and the learned second reading")


def _briefing_agents(app: Any) -> Check:
    agents = sorted(
        name
        for name, agent in app.config.current.agents.items()
        if getattr(agent, "memory_briefing", False)
    )
    if not agents:
        return Check("prompt briefings", "info", "no agent has memory_briefing on")
    return Check("prompt briefings", "info", "memory_briefing is on for: " + ", ".join(agents))


def exit_code(rows: list[Check]) -> int:
    return 1 if any(r.status == "fail" for r in rows) else 0


def _config(app: Any) -> Check:
    sources = app.config.current.sources
    shown = ", ".join(sources) if sources else "no files: built-in defaults"
    return Check("configuration", "ok", f"loaded from {shown}")


def _store(app: Any) -> Check:
    health = app.store.health()
    where = health.location
    if health.problem is not None:
        return Check("store", "fail", f"{where}: {health.problem}")
    if health.schema != health.latest:
        return Check(
            "store", "fail", f"{where}: schema {health.schema}, this version needs {health.latest}"
        )
    return Check("store", "ok", f"{where} ({health.detail}, schema {health.schema})")


def _embedder(app: Any, clock: Callable[[], float]) -> Check:
    embedder = app.embedder
    if embedder is None:
        return Check("embeddings", "info", "off: recall ranks by text (BM25) alone")
    health = describe_embedder(embedder)
    if health.state == "degraded":
        # Named plainly: the daemon still answers, so nothing else would show that recall
        # has lost its meaning channel.
        return Check("embeddings", "fail", f"{health.model}: {health.sentence()}")
    started = clock()
    try:
        embedder.embed(["doctor check"])
    except EmbeddingUnavailable as exc:
        return Check("embeddings", "fail", f"{embedder.model_id}: word-only search: {exc}")
    took = (clock() - started) * 1000
    queries = f"; queries by {health.queries}" if health.queries else ""
    return Check(
        "embeddings",
        "ok",
        f"{embedder.model_id} answered in {took:.0f} ms: words and meaning (hybrid search)"
        + queries,
    )


#: An unreachable provider fails the doctor only after this long; brief outages only warn.
UNREACHABLE_FAIL_S = 300.0


def _provider(app: Any, status: dict[str, Any], *, wall: float) -> list[Check]:
    provider = status["provider"]
    name, state = provider.get("name"), provider.get("state")
    contract = provider.get("contract")
    detail = f"{name}: {state}" + (f", contract {contract}" if contract is not None else "")
    if provider.get("reason"):
        detail += f" ({provider['reason']})"
    down_since = provider.get("down_since")
    if state in ("ok", "up", "starting"):
        verdict: Status = "ok"
    elif state == "incompatible":
        verdict = "fail"
    elif down_since is not None and wall - float(down_since) > UNREACHABLE_FAIL_S:
        verdict = "fail"
        detail += f", unreachable for {(wall - float(down_since)) / 60:.0f} min"
    else:
        verdict = "warn"
    rows = [Check("provider", verdict, detail)]
    upstream = _upstream_settings(app, str(name))
    if upstream is not None:
        url = getattr(upstream, "url", None)
        if url:
            host = urlsplit(str(url)).hostname or str(url)
            rows.append(Check("provider privacy", "note", f"episodes leave this host for {host}"))
        else:
            rows.append(
                Check(
                    "provider privacy",
                    "note",
                    f"{name} is a local process; fleetmem cannot see whether it calls a network"
                    " service",
                )
            )
    return rows


def _upstream_settings(app: Any, name: str) -> object | None:
    upstreams = getattr(app.config.current, "mcp", None)
    if not upstreams or name == "builtin":
        return None
    try:
        return upstreams.get(name)  # type: ignore[no-any-return]
    except (AttributeError, FleetmemError):
        return None


def _work(status: dict[str, Any]) -> list[Check]:
    rows = []
    pending, failed = status["pending"], status["failed"]
    for kind in ("record", "forget"):
        age = pending.get(f"oldest_{kind}_age_s")
        count = pending.get(kind, 0)
        if failed.get(kind):
            rows.append(Check(f"{kind}s", "warn", f"{failed[kind]} failed after 24 h of retries"))
        elif count and age is not None and age > PENDING_WARN_S:
            rows.append(
                Check(f"{kind}s", "warn", f"{count} pending, oldest {age / 3600:.1f} h old")
            )
        else:
            rows.append(Check(f"{kind}s", "ok", f"{count} pending, none failed"))
    return rows


def _vectors(status: dict[str, Any]) -> Check:
    missing = status.get("vectors_missing", 0)
    model = status.get("embedding_model")
    if not model:
        return Check("vectors", "info", "no embedding model is set: episodes are not embedded")
    reembed = status.get("reembed") or {}
    if missing:
        progress = f" ({reembed_line(reembed)})" if reembed.get("model") else ""
        return Check(
            "vectors",
            "warn",
            f"{missing} episodes have no vector yet; the daemon backfills them{progress}",
        )
    if not reembed.get("complete", True):
        return Check("vectors", "warn", f"re-embedding for {model}: {reembed_line(reembed)}")
    return Check("vectors", "ok", f"every built-in episode has a {model} vector")


#: The hourly upkeep merges the text index once a tenth of it lies outside its largest
#: segment; three times that means no upkeep has run for a while (no daemon, no cron job).
INDEX_WARN_SHARE = 3 * COMPACT_MIN_SHARE


def _text_index(status: dict[str, Any]) -> Check:
    segments = status.get("index_segments", 0)
    outside = status.get("index_outside_largest", 0.0)
    counted = f"{segments} segment{'' if segments == 1 else 's'}"
    if segments >= COMPACT_MIN_SEGMENTS and outside >= INDEX_WARN_SHARE:
        return Check(
            "text index",
            "warn",
            f"{counted}, {outside:.0%} of the index outside the largest: each text query looks"
            " its terms up in every one; the daemon merges them hourly, or run `fleetmem jobs`",
        )
    return Check("text index", "ok", counted)


#: Degraded recalls are looked for in this window (seed 000 REQ-19).
DEGRADED_WINDOW_S = 86400.0


def _degraded_recalls(app: Any, now: float) -> Check:
    try:
        reasons = app.store.degraded_recalls_since(now - DEGRADED_WINDOW_S)
    except Exception as exc:  # the doctor reports, it does not crash
        return Check("degraded recalls", "warn", f"cannot read the degraded-recall log: {exc}")
    total = sum(n for _, n in reasons)
    if not total:
        return Check("degraded recalls", "ok", "none in the last 24 h")
    main, main_n = reasons[0]
    detail = f"{total} in the last 24 h, mostly {main} ({main_n})"
    if len(reasons) > 1:
        detail += "; also " + ", ".join(f"{r} ({n})" for r, n in reasons[1:])
    return Check("degraded recalls", "warn", detail)


def _summaries(status: dict[str, Any]) -> Check:
    if status.get("summaries"):
        return Check("summaries", "info", "on, through [model_api] utility_model")
    return Check("summaries", "info", "off: episodes are recorded without summaries")
