"""The circuit breaker: closed, open after consecutive failures, half-open probe."""

from __future__ import annotations

import pytest

from fleetmem.providers.breaker import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_opens_after_consecutive_failures_only() -> None:
    clock = Clock()
    breaker = CircuitBreaker(threshold=3, cooldown_s=10, clock=clock)
    for _ in range(2):
        assert breaker.allow()
        breaker.failure()
    breaker.success()  # a success in between resets the count
    for _ in range(2):
        breaker.failure()
    assert breaker.state == "closed" and breaker.allow()
    breaker.failure()
    assert breaker.state == "open"
    assert not breaker.allow()
    assert breaker.opened_count == 1


def test_half_open_lets_one_probe_through_and_its_outcome_decides() -> None:
    clock = Clock()
    breaker = CircuitBreaker(threshold=1, cooldown_s=10, clock=clock)
    breaker.failure()
    clock.now += 9.9
    assert not breaker.allow()
    clock.now += 0.2
    assert breaker.state == "half_open"
    assert breaker.allow()  # the probe
    assert not breaker.allow()  # only one at a time
    breaker.failure()  # the probe failed: open for another cooldown
    assert breaker.state == "open" and not breaker.allow()
    clock.now += 10
    assert breaker.allow()
    breaker.success()
    assert breaker.state == "closed" and breaker.allow() and breaker.allow()


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        CircuitBreaker(threshold=0)
    with pytest.raises(ValueError):
        CircuitBreaker(cooldown_s=0)
