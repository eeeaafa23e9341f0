"""Optional OpenTelemetry traces and metrics over OTLP/HTTP (seed 000 REQ-18), with consent.

Nothing is exported unless ``[telemetry] enabled = true``: until :func:`start` installs a
tracer, every span below does nothing, and OpenTelemetry is not even imported (a hook
answering in its own process would spend 10 ms of its budget on it). Once started (by the
daemon), spans go to the configured collector and every fleetmem metric of ``/metrics`` is
exported beside them.

What may leave is decided here, not at each call site. A span's attributes pass
:func:`safe_attributes`: only the keys of :data:`ALLOWED_ATTRIBUTES`, only numbers, booleans and
short identifier-like strings (ids, provider and agent names, outcome codes). Free text of any
kind (episode text, summaries, briefings, queries, prompts, error messages) has no key to go
under, and a string that does not look like an identifier is withheld even under an allowed
key. A failed operation's span records the exception's class name only, never its message.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from fleetmem.config.settings import TelemetrySettings

if TYPE_CHECKING:
    from opentelemetry import trace

log = logging.getLogger(__name__)

ALLOWED_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "fleetmem.run_id",
        "fleetmem.episode_id",
        "fleetmem.agent",
        "fleetmem.provider",
        "fleetmem.outcome",
        "fleetmem.delivery",
        "fleetmem.items",
        "fleetmem.dropped",
        "fleetmem.bytes",
        "fleetmem.degraded",
        "fleetmem.scopes",
        "fleetmem.error_class",
    }
)
#: What an exported string may look like: an id, a name or a code, never prose.
_IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}")
WITHHELD = "withheld"

#: The exporting tracer while :func:`start`'s exporters run; None otherwise.
_tracer: trace.Tracer | None = None

P = ParamSpec("P")
R = TypeVar("R")


def safe_attributes(attrs: Mapping[str, object]) -> dict[str, str | int | float | bool]:
    """The attributes that may leave the machine (see the module docstring)."""
    out: dict[str, str | int | float | bool] = {}
    for key, value in attrs.items():
        if key not in ALLOWED_ATTRIBUTES or value is None:
            continue
        if isinstance(value, bool | int | float):
            out[key] = value
        elif isinstance(value, str):
            out[key] = value if _IDENTIFIER.fullmatch(value) else WITHHELD
    return out


class SpanHandle:
    """Adds attributes to the span in progress, through the same filter."""

    def __init__(self, span: trace.Span | None) -> None:
        self._span = span  # None: nothing is exported, so nothing is kept

    def set(self, **attrs: object) -> None:
        if self._span is None:
            return
        named = {f"fleetmem.{k}": v for k, v in attrs.items()}
        self._span.set_attributes(safe_attributes(named))


@contextmanager
def span(name: str, **attrs: object) -> Iterator[SpanHandle]:
    """A span named ``name`` with ``attrs`` (``run_id=...`` becomes ``fleetmem.run_id``)."""
    tracer = _tracer
    if tracer is None:
        yield SpanHandle(None)
        return
    from opentelemetry.trace import Status, StatusCode

    named = {f"fleetmem.{k}": v for k, v in attrs.items()}
    # record_exception would copy the exception's message, which may quote stored text.
    with tracer.start_as_current_span(
        name,
        attributes=safe_attributes(named),
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        handle = SpanHandle(current)
        try:
            yield handle
        except BaseException as exc:
            handle.set(error_class=type(exc).__name__)
            current.set_status(Status(StatusCode.ERROR))
            raise


def traced(
    name: str, describe: Callable[[Any], Mapping[str, object]] | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Wrap a function in :func:`span`; ``describe(result)`` names the attributes to add."""

    def wrap(func: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(func)
        def inner(*args: P.args, **kwargs: P.kwargs) -> R:
            with span(name) as handle:
                result = func(*args, **kwargs)
                if describe is not None:
                    try:
                        handle.set(**describe(result))
                    except Exception as exc:  # describing must never fail the operation
                        log.debug("telemetry.describe_failed span=%s error=%s", name, exc)
                return result

        return inner

    return wrap


_FLUSH_TIMEOUT_MS = 10_000


class Telemetry:
    """The running exporters; :meth:`shutdown` flushes them and restores the no-op tracer."""

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider

    def shutdown(self) -> None:
        global _tracer
        _tracer = None
        for provider in (self._tracer_provider, self._meter_provider):
            try:
                # The SDK's own last collection at shutdown allows only one export interval,
                # which a busy machine can miss (then the final numbers never leave): flush
                # first with the exporters' own timeout.
                provider.force_flush(_FLUSH_TIMEOUT_MS)
                provider.shutdown()
            except Exception as exc:  # a collector gone away must not fail the daemon's exit
                log.warning("telemetry.shutdown_failed error=%s", type(exc).__name__)


def start(settings: TelemetrySettings, environ: Mapping[str, str]) -> Telemetry | None:
    """Start exporting if ``settings.enabled``; ``None`` (nothing leaves) otherwise."""
    global _tracer
    if not settings.enabled:
        return None
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    base = settings.endpoint.rstrip("/")
    headers = {name: environ.get(var, "") for name, var in settings.headers.items()}
    resource = Resource.create({"service.name": settings.service_name})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(
        BatchSpanProcessor(
            OTLPSpanExporter(endpoint=f"{base}/v1/traces", headers=headers, timeout=5)
        )
    )
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{base}/v1/metrics", headers=headers, timeout=5),
        export_interval_millis=settings.export_interval_s * 1000,
        # The default timeout is 30 s whatever the interval; a collection is a registry read.
        export_timeout_millis=_FLUSH_TIMEOUT_MS,
    )
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    _bridge_metrics(meter_provider)
    _tracer = tracer_provider.get_tracer("fleetmem")
    log.info("telemetry.started endpoint=%s", base)
    return Telemetry(tracer_provider, meter_provider)


def _bridge_metrics(meter_provider: Any) -> None:
    """Export every counter and gauge of fleetmem's Prometheus registry as observed
    instruments: one set of numbers, whichever way it is read. Their labels are the bounded
    sets ``/metrics`` already exposes (names of agents and providers, outcome codes)."""
    from opentelemetry.metrics import CallbackOptions, Observation

    from fleetmem import metrics

    meter = meter_provider.get_meter("fleetmem")
    # One collection calls every instrument's callback in the order they were created, so
    # the first one reads the registry and the rest take their series from that reading:
    # the registry is read once per export, not once per instrument.
    reading: dict[str, list[Any]] = {}

    def observe(sample_name: str, first: bool) -> Callable[[CallbackOptions], list[Observation]]:
        def callback(_options: CallbackOptions) -> list[Observation]:
            if first:
                reading.clear()
                for family in metrics.REGISTRY.collect():
                    for sample in family.samples:
                        reading.setdefault(sample.name, []).append(sample)
            return [Observation(s.value, dict(s.labels)) for s in reading.get(sample_name, [])]

        return callback

    created = 0
    for family in metrics.REGISTRY.collect():
        if family.type == "counter":
            name = f"{family.name}_total"
            meter.create_observable_counter(
                name, callbacks=[observe(name, created == 0)], description=family.documentation
            )
        elif family.type == "gauge":
            meter.create_observable_gauge(
                family.name,
                callbacks=[observe(family.name, created == 0)],
                description=family.documentation,
            )
        else:
            continue
        created += 1
