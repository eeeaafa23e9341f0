"""The briefing pushed to a run at spawn (seed 000 REQ-16, REQ-17): bounded, stored, fenced.

``compute`` computes a run's briefing without waiting on the episode provider longer than
``[memory.episodes] provider_timeout``: a provider that has not answered by then is reported
``provider_unavailable`` in the episodes section, exactly as a failed one. The caller stores
it as the run's briefing (``AgentMemory.keep_briefing``: the ``briefing`` tool and resource
then serve the same document) and serves it with ``delivery="prompt"``, which writes the
exposure rows of its facts before anything is shown and withholds a fact whose row cannot be
written. ``fence`` wraps it in the single-block fence with a fresh nonce in front of the
prompt; ``fits`` says whether the result still fits one argument of the platform
(``MAX_ARG_STRLEN``, 128 KiB on Linux).

Nothing here stores or logs the composed prompt: one INFO line per prepend names the agent,
the run, the size and the item counts; a skip is one WARN line naming agent, run and reason.
"""

from __future__ import annotations

import logging
import os
import secrets
import sys
import threading
from collections.abc import Mapping, Sequence

from fleetmem.config import BUILTIN_PROVIDER
from fleetmem.core.briefing import Composed
from fleetmem.core.fence import NonceCollision, prepend_briefing
from fleetmem.core.wrapper import parse
from fleetmem.errors import FleetmemError
from fleetmem.providers.base import ProviderRecall
from fleetmem.service.bootstrap import App
from fleetmem.service.briefings import BriefingService, Subject, subject_of
from fleetmem.service.fact_items import FactItems
from fleetmem.service.runs import Caller

log = logging.getLogger("fleetmem.integrations.briefing")

_NONCE_ATTEMPTS = 4
#: The longest a cold process waits for the in-process built-in provider's session to open.
BUILTIN_START_S = 10.0
SECTIONS = ("collisions", "recent_runs", "facts", "episodes")


def counts(text: str) -> str:
    """Item counts per section of a briefing, for the one log line a delivery writes."""
    try:
        document, _ = parse(text)
    except Exception:
        return "sections=unreadable"
    found = {s.name: len(s.items) for s in document.sections}
    return " ".join(f"{name}={found.get(name, 0)}" for name in SECTIONS)


def ensure_stored(
    app: App,
    caller: Caller,
    *,
    provider_wait: float | None = None,
    builtin_start: float = BUILTIN_START_S,
) -> bool:
    """Make sure the run has its stored briefing, computing it now (bounded as
    :func:`compute` says, in the workspace of the caller's agent) unless it has one; False
    when it cannot be computed. An agent bound to no existing workspace raises
    UnknownAgentWorkspace."""
    if app.agent_memory.stored_briefing(caller.run_id) is not None:
        return True  # a respawn, a resumed session: the run keeps its briefing
    app = app.for_agent(caller.agent)
    composed = compute(
        app, subject_of(caller), provider_wait=provider_wait, builtin_start=builtin_start
    )
    if composed is None:
        return False
    app.agent_memory.keep_briefing(
        composed,
        run_id=caller.run_id,
        agent=caller.agent,
        repo=caller.repo,
        branch=caller.branch,
        origin="spawn",
    )
    return True


# ---- computing, bounded -----------------------------------------------------------------


class _Unavailable:
    """An episode provider that is down: what a provider that did not answer in time is."""

    enforces_deadlines = True

    def __init__(self, name: str) -> None:
        self.name = name

    def record(self, *args: object) -> list[str]:
        raise ConnectionError("not used for recording")

    def recall(self, *args: object) -> ProviderRecall:
        raise TimeoutError("the provider did not answer within provider_timeout")

    def forget(self, provider_id: str) -> bool:
        raise ConnectionError("not used for forgetting")


def _without_provider(app: App, subject: Subject) -> Composed:
    memory = app.memory.answered_by(_Unavailable(app.memory.provider.name))
    try:
        service = BriefingService(memory=memory, runs=app.runs, settings=lambda: app.config.current)
        service.set_facts_source(FactItems(app.facts))
        return service.briefing(subject)
    finally:
        memory.close()


def warm_up(app: App) -> None:
    """Start opening the provider's session now, so it is under way while the run is being
    set up (the built-in one spends most of a cold start importing the MCP SDK)."""
    try:
        app.providers.start()
    except Exception as exc:
        log.debug("provider.warm_up_failed error=%s", type(exc).__name__)


def compute(
    app: App,
    subject: Subject,
    *,
    provider_wait: float | None = None,
    builtin_start: float = BUILTIN_START_S,
) -> Composed | None:
    """The briefing of ``subject`` now (facts from ``app``'s workspace), waiting at most
    ``provider_timeout`` (or ``provider_wait``, when that is shorter: a hook's hard deadline)
    for the provider; None when it cannot be computed at all.

    The built-in provider lives in this process: its session's cold start (up to
    ``builtin_start``) is set-up time, not a provider being slow, so it is allowed on top of
    the provider's wait. An upstream gets no such allowance. Both waits happen in a worker
    thread: whatever holds the provider up (even opening its session), the caller has its
    answer when they pass, given without episodes (``provider_unavailable``).
    """
    builtin = app.providers.configured_name == BUILTIN_PROVIDER
    timeout = app.settings.memory.episodes.provider_timeout_s
    if provider_wait is not None:
        timeout = max(0.0, min(timeout, provider_wait))
    box: dict[str, Composed | BaseException] = {}

    def work() -> None:
        try:
            if builtin:
                try:
                    app.providers.provider(BUILTIN_PROVIDER).session.wait_settled(builtin_start)
                except Exception as exc:
                    log.debug("provider.builtin_start_failed error=%s", type(exc).__name__)
            box["ok"] = app.briefings.briefing(subject)
        except BaseException as exc:  # reported below; a thread must not raise
            box["error"] = exc

    worker = threading.Thread(target=work, name="fleetmem-briefing", daemon=True)
    worker.start()
    worker.join(timeout + (max(0.0, builtin_start) if builtin else 0.0))
    if "ok" in box:
        found = box["ok"]
        return found if isinstance(found, Composed) else None
    error = box.get("error")
    if isinstance(error, BaseException):
        log.warning("briefing.failed agent=%s error=%s", subject.agent, _kind(error))
        return None
    # The provider is still thinking: brief without it, as for a provider that is down.
    log.warning("briefing.provider_slow agent=%s after=%gs", subject.agent, timeout)
    try:
        return _without_provider(app, subject)
    except Exception as exc:
        log.warning("briefing.failed agent=%s error=%s", subject.agent, _kind(exc))
        return None


def _kind(exc: BaseException) -> str:
    return str(exc)[:200] if isinstance(exc, FleetmemError) else type(exc).__name__


# ---- fencing and composing --------------------------------------------------------------


def fence(briefing: str, prompt: str) -> str:
    """``prepend_briefing`` with a fresh 128-bit nonce (drawn again if the text holds it)."""
    for _ in range(_NONCE_ATTEMPTS):
        try:
            return prepend_briefing(briefing, prompt, nonce=secrets.token_hex(16))
        except NonceCollision:
            log.warning("briefing.nonce_collision drawing a fresh nonce")
    raise NonceCollision()


def per_argument_limit() -> int:
    """The most bytes one argv element may have, its terminating NUL included."""
    if sys.platform.startswith("linux"):
        return 32 * os.sysconf("SC_PAGE_SIZE")  # MAX_ARG_STRLEN
    return max(4096, os.sysconf("SC_ARG_MAX") // 2)


def fits(argv: Sequence[str], env: Mapping[str, str]) -> bool:
    """Whether ``argv`` and ``env`` can be passed to exec: every argument under the
    per-argument limit and everything together under ``ARG_MAX``."""
    limit = per_argument_limit()
    sizes = [len(os.fsencode(a)) + 1 for a in argv]
    if any(size > limit for size in sizes):
        return False
    env_size = sum(len(os.fsencode(k)) + len(os.fsencode(v)) + 2 for k, v in env.items())
    pointers = 8 * (len(argv) + len(env) + 2)
    return sum(sizes) + env_size + pointers < os.sysconf("SC_ARG_MAX")
