"""A circuit breaker per provider: stop calling a provider that keeps failing.

Closed: calls go through; ``threshold`` consecutive failures open it. Open: calls are
refused at once (recall degrades without waiting for a timeout) until ``cooldown_s`` has
passed. Half-open: one probe call goes through; its success closes the breaker, its failure
opens it for another cooldown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final, Literal

BreakerState = Literal["closed", "open", "half_open"]

DEFAULT_THRESHOLD: Final = 5
DEFAULT_COOLDOWN_S: Final = 30.0


class CircuitBreaker:
    """Thread-safe; ``clock`` is monotonic seconds (injected by tests)."""

    def __init__(
        self,
        *,
        threshold: int = DEFAULT_THRESHOLD,
        cooldown_s: float = DEFAULT_COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if threshold < 1 or cooldown_s <= 0:
            raise ValueError("threshold must be >= 1 and cooldown_s > 0")
        self._threshold = threshold
        self._cooldown = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._state: BreakerState = "closed"
        self._failures = 0
        self._opened_at = 0.0
        self._probing = False
        self.opened_count = 0

    @property
    def state(self) -> BreakerState:
        """The state as a caller would find it now (open turns half-open after the cooldown)."""
        with self._lock:
            if self._state == "open" and self._clock() - self._opened_at >= self._cooldown:
                return "half_open"
            return self._state

    @property
    def failures(self) -> int:
        return self._failures

    def allow(self) -> bool:
        """May a call go through now? In half-open state only one probe at a time may."""
        with self._lock:
            if self._state == "closed":
                return True
            if self._state == "open":
                if self._clock() - self._opened_at < self._cooldown:
                    return False
                self._state = "half_open"
                self._probing = False
            if self._probing:
                return False
            self._probing = True
            return True

    def success(self) -> None:
        with self._lock:
            self._state = "closed"
            self._failures = 0
            self._probing = False

    def failure(self) -> None:
        with self._lock:
            self._failures += 1
            if self._state == "half_open" or self._failures >= self._threshold:
                if self._state != "open":
                    self.opened_count += 1
                self._state = "open"
                self._opened_at = self._clock()
                self._probing = False
