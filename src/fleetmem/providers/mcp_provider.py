"""The episode provider as the memory service sees it, implemented over one MCP session.

Every provider, the built-in one included, is reached through this class: the request is
built by :mod:`fleetmem.providers.contract`, sent over a :class:`SupervisedSession`, and the
response validated against the contract's schema before anything reads it. A provider that
is incompatible, whose breaker is open, that times out, errors or answers out of contract
raises ``ProviderIncompatible`` or ``ProviderUnavailable``; the memory service turns those
into a degraded recall or a queued retry, never into an error for its caller.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fleetmem.config import Settings
from fleetmem.errors import ProviderIncompatible, ProviderUnavailable
from fleetmem.providers import contract
from fleetmem.providers.base import ProviderItem, ProviderRecall
from fleetmem.providers.breaker import CircuitBreaker
from fleetmem.providers.calllog import DAEMON_CALLER, CallLog, write_row
from fleetmem.providers.session import SupervisedSession

log = logging.getLogger("fleetmem.providers")


class McpEpisodeProvider:
    """:class:`fleetmem.providers.base.EpisodeProvider` over MCP, with a circuit breaker.

    Deadlines: ``memory_recall`` gets ``[memory.episodes] provider_timeout``; record, forget
    and the contract check get the upstream's ``call_timeout``.
    """

    #: The memory service need not wrap calls in a thread of its own to cut them off.
    enforces_deadlines = True

    def __init__(
        self,
        name: str,
        session: SupervisedSession,
        *,
        settings: Callable[[], Settings],
        breaker: CircuitBreaker | None = None,
        call_log: CallLog | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._name = name
        self.session = session
        self._settings = settings
        self.breaker = breaker or CircuitBreaker()
        self._call_log = call_log
        self._clock = clock

    @property
    def name(self) -> str:
        return self._name

    @property
    def transport(self) -> str:
        return self.session.target.transport

    # ---- the contract -----------------------------------------------------------------
    def record(
        self,
        episode_id: str,
        scope: str,
        trust_class: str,
        episode: Mapping[str, Any],
        text: str,
    ) -> list[str]:
        args = contract.record_request(episode_id, scope, trust_class, episode, text)
        checked = self._invoke("memory_record_episode", args, self.session.target.call_timeout_s)
        return [str(i) for i in checked.data["ids"]]

    def recall(
        self, query: str, scopes: Sequence[str], limit: int, paths: Sequence[str]
    ) -> ProviderRecall:
        args = contract.recall_request(query, scopes, limit, paths)
        timeout = self._settings().memory.episodes.provider_timeout_s
        checked = self._invoke("memory_recall", args, timeout)
        items: list[ProviderItem] = []
        for index, raw in enumerate(checked.data["items"]):
            if index in checked.invalid_items:
                continue
            score = raw.get("score")
            items.append(
                ProviderItem(
                    id=str(raw["id"]),
                    text=str(raw["text"]),
                    score=None if score is None else float(score),
                )
            )
        degraded = checked.data.get("degraded")
        return ProviderRecall(
            items=tuple(items),
            degraded=degraded if degraded in contract.KNOWN_DEGRADED else None,
            invalid=len(checked.invalid_items),
        )

    def forget(self, provider_id: str) -> bool:
        args = contract.forget_request(provider_id)
        checked = self._invoke("memory_forget", args, self.session.target.call_timeout_s)
        return bool(checked.data["forgotten"])

    # ---- state ------------------------------------------------------------------------
    def describe(self, probe_s: float = 0.0) -> dict[str, Any]:
        """State for status: ``ok``, ``incompatible``, ``unavailable``, ``breaker_open`` or
        ``starting``; ``probe_s`` > 0 opens the session first and waits that long for its check.
        """
        if probe_s > 0:
            self.session.wait_settled(probe_s)
        status = self.session.status
        breaker = self.breaker.state
        state = status.state
        if state != "incompatible" and breaker == "open":
            state = "breaker_open"
        info = None
        if status.provider_name or status.provider_version:
            info = {"name": status.provider_name, "version": status.provider_version}
        return {
            "name": self._name,
            "state": state,
            "contract": status.contract,
            "transport": self.transport,
            "where": self.session.target.where,
            "implementation": info,
            "reason": status.reason,
            "checked_at": status.checked_at,
            "down_since": status.down_since,
            "breaker": breaker,
        }

    def recheck(self, timeout: float) -> None:
        """Check the contract now, on the open session: an idle provider that died is seen
        as down here rather than on the next call that needs it."""
        self.session.recheck(timeout)

    def close(self) -> None:
        self.session.close()

    # ---- one call ---------------------------------------------------------------------
    def _invoke(
        self, tool: str, args: Mapping[str, Any], timeout: float
    ) -> contract.CheckedResponse:
        status = self.session.wait_settled(self.session.target.connect_timeout_s)
        if status.state == "incompatible":
            # Nothing is sent to an incompatible provider (seed 000 REQ-3).
            raise ProviderIncompatible(status.reason or "incompatible", provider=self._name)
        if not self.breaker.allow():
            raise ProviderUnavailable("the circuit breaker is open", provider=self._name)
        at = self._clock()
        started = time.perf_counter()
        outcome, error = "ok", None
        try:
            answer = self.session.call(tool, args, timeout)
            payload = contract.payload_of(
                tool, is_error=answer.is_error, structured=answer.structured, texts=answer.texts
            )
            checked = contract.check_response(tool, payload)
        except contract.ContractViolation as exc:
            outcome = "error" if answer.is_error else "invalid"
            error = exc.reason
            self.breaker.failure()
            raise ProviderUnavailable(f"{tool}: {exc.reason}", provider=self._name) from None
        except ProviderUnavailable as exc:
            outcome = "timeout" if "no answer within" in exc.message else "unavailable"
            error = exc.message
            self.breaker.failure()
            raise
        else:
            self.breaker.success()
            return checked
        finally:
            write_row(
                self._call_log,
                at=at,
                caller=DAEMON_CALLER,
                upstream=self._name,
                tool=tool,
                args=args,
                outcome=outcome,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
                error=error,
            )
