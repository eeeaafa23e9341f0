"""Prometheus metrics, read as ``metrics.NAME`` (the series are in :mod:`fleetmem.metric_series`).

The client library and the series are imported on the first attribute read, not with this
module: a hook answering in its own process lives a few hundred milliseconds, never exposes
``/metrics``, and importing ``prometheus_client`` alone (it brings an HTTP server, email
parsing and urllib with it) costs about 20 ms of its 300 ms budget. Such a process calls
:func:`unexposed` first; from then on every series it touches records nothing.

One registry per process; ``fleetmem serve`` exposes it at ``/metrics``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fleetmem.metric_series import *  # noqa: F403 (the names this module hands out)

_unexposed = False


class _Unrecorded:
    """A series of a process whose metrics nobody can read: every update is dropped."""

    def labels(self, *_values: str, **_labels: str) -> _Unrecorded:
        return self

    def inc(self, _amount: float = 1.0) -> None:
        return None

    def dec(self, _amount: float = 1.0) -> None:
        return None

    def set(self, _value: float) -> None:
        return None

    def observe(self, _amount: float) -> None:
        return None


_UNRECORDED = _Unrecorded()


def unexposed() -> None:
    """Record no metric in this process, which will never expose them (a hook answering in
    its own process). Series already read keep recording; call this before any is read."""
    global _unexposed
    _unexposed = True


def __getattr__(name: str) -> Any:
    if not name.isupper():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _unexposed and name != "REGISTRY":
        return _UNRECORDED
    from fleetmem import metric_series

    return getattr(metric_series, name)


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    """Current value of one series (0.0 when absent); used by status and tests."""
    from fleetmem.metric_series import REGISTRY

    value = REGISTRY.get_sample_value(name, labels or {})
    return 0.0 if value is None else float(value)
