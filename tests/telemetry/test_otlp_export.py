"""Telemetry with consent (seed 000 REQ-18): spans and metrics reach a real OTLP/HTTP receiver
on 127.0.0.1 only when ``[telemetry]`` enables them, and no text of any memory ever does."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from fleetmem import telemetry
from fleetmem.config.settings import TelemetrySettings
from fleetmem.service.bootstrap import App, build
from tests.conftest import make_record, session, write_config


@dataclass
class Receiver:
    """An OTLP/HTTP collector stand-in: decodes what it is sent and keeps every byte."""

    raw: list[bytes] = field(default_factory=list)
    spans: list[Any] = field(default_factory=list)
    metric_names: set[str] = field(default_factory=set)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with got.lock:
                got.raw.append(body)
                got.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path == "/v1/traces":
                    request = ExportTraceServiceRequest.FromString(body)
                    for rs in request.resource_spans:
                        for ss in rs.scope_spans:
                            got.spans.extend(ss.spans)
                elif self.path == "/v1/metrics":
                    metrics = ExportMetricsServiceRequest.FromString(body)
                    for rm in metrics.resource_metrics:
                        for sm in rm.scope_metrics:
                            got.metric_names.update(m.name for m in sm.metrics)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    got.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield got
    server.shutdown()
    server.server_close()


def _app(home: Path, receiver: Receiver, enabled: bool) -> App:
    table = (
        f'[telemetry]\nenabled = {"true" if enabled else "false"}\nendpoint = "{receiver.url}"\n'
        'export_interval = "1s"\nheaders = { X-Collector-Token = "OTLP_TOKEN" }\n'
    )
    write_config(home, '[model_api]\nembedding_model = ""\n[agent.api-fixer]\n' + table)
    return build(home, {"HOME": str(home.parent)})


def _work(app: App, marker: str) -> None:
    """Everything that makes spans, each carrying text that must not leave."""
    record = make_record(
        run_id=f"run-{secrets.token_hex(4)}",
        agent="api-fixer",
        result_text=f"fixed the {marker} ledger test",
        prompt=f"please look at {marker}",
        sessions=[session()],
    )
    result = app.memory.ingest_run(record)
    assert result.episode_id is not None
    app.memory.recall(f"what about {marker}?", scopes=["project:github.com/acme/api"])
    app.briefings.count_delivery("api-fixer", "prompt", None, reason="briefing_failed")
    app.memory.forget(result.episode_id)


def _attribute_values(span: Any) -> list[str]:
    values = []
    for attr in span.attributes:
        v = attr.value
        values.append(v.string_value if v.HasField("string_value") else str(v))
    return values


def test_spans_and_metrics_arrive_and_carry_no_memory_text(home: Path, receiver: Receiver) -> None:
    marker = "zq" + secrets.token_hex(8)
    app = _app(home, receiver, enabled=True)
    token = "tok-" + secrets.token_hex(6)
    running = telemetry.start(app.settings.telemetry, {"OTLP_TOKEN": token})
    assert running is not None
    try:
        _work(app, marker)
    finally:
        running.shutdown()  # flushes both exporters
        app.close()
    names = {s.name for s in receiver.spans}
    assert {
        "fleetmem.ingest_run",
        "fleetmem.episode.record",
        "fleetmem.recall",
        "fleetmem.briefing",
        "fleetmem.forget",
    } <= names
    recall = next(s for s in receiver.spans if s.name == "fleetmem.recall")
    keys = {a.key for a in recall.attributes}
    assert {"fleetmem.provider", "fleetmem.items", "fleetmem.degraded"} <= keys
    for s in receiver.spans:
        assert all(a.key in telemetry.ALLOWED_ATTRIBUTES for a in s.attributes), s.name
        assert not any(marker in v for v in _attribute_values(s)), s.name
    assert "fleetmem_recalls_total" in receiver.metric_names
    assert "fleetmem_episodes_recorded_total" in receiver.metric_names
    everything = b"".join(receiver.raw)
    assert marker.encode() not in everything  # not in any field, of any message
    assert all(h.get("x-collector-token") == token for h in receiver.headers)


def test_nothing_is_sent_unless_telemetry_is_enabled(home: Path, receiver: Receiver) -> None:
    app = _app(home, receiver, enabled=False)
    try:
        assert telemetry.start(app.settings.telemetry, {}) is None
        _work(app, "zq" + secrets.token_hex(8))
    finally:
        app.close()
    assert receiver.raw == []


def test_only_identifier_like_values_under_allowed_keys_may_leave() -> None:
    attrs = telemetry.safe_attributes(
        {
            "fleetmem.run_id": "run-1a2b",
            "fleetmem.provider": "builtin",
            "fleetmem.items": 3,
            "fleetmem.degraded": "the provider said: secret plans",
            "fleetmem.query": "where is the ledger?",
            "text": "anything",
            "fleetmem.agent": None,
        }
    )
    assert attrs == {
        "fleetmem.run_id": "run-1a2b",
        "fleetmem.provider": "builtin",
        "fleetmem.items": 3,
        "fleetmem.degraded": telemetry.WITHHELD,
    }


def test_a_failed_operation_records_its_class_not_its_message(receiver: Receiver) -> None:
    running = telemetry.start(
        TelemetrySettings(enabled=True, endpoint=receiver.url, export_interval_s=60.0), {}
    )
    assert running is not None
    try:
        with pytest.raises(ValueError), telemetry.span("fleetmem.test", run_id="run-9"):
            raise ValueError("the secret plans of the ledger")
    finally:
        running.shutdown()
    failed = next(s for s in receiver.spans if s.name == "fleetmem.test")
    assert "fleetmem.error_class" in {a.key for a in failed.attributes}
    assert b"secret plans" not in b"".join(receiver.raw)


def test_bad_telemetry_settings_are_refused_naming_the_key(home: Path) -> None:
    from fleetmem.errors import ConfigError

    write_config(home, '[telemetry]\nendpoint = "ftp://collector"\n')
    with pytest.raises(ConfigError, match=r"telemetry\.endpoint"):
        build(home, {"HOME": str(home.parent)})
    write_config(home, '[telemetry]\nexport_interval = "1ms"\n')
    with pytest.raises(ConfigError, match=r"telemetry\.export_interval"):
        build(home, {"HOME": str(home.parent)})


def test_the_daemon_exports_when_enabled_and_flushes_on_exit(
    home: Path, receiver: Receiver
) -> None:
    from tests.conftest import EXAMPLE
    from tests.surfaces.test_http import Daemon

    write_config(
        home,
        '[model_api]\nembedding_model = ""\n'
        f'[telemetry]\nenabled = true\nendpoint = "{receiver.url}"\nexport_interval = "1s"\n',
    )
    daemon = Daemon(home)
    try:
        posted = daemon.client.post(
            "/api/v1/runs",
            content=EXAMPLE.read_bytes(),
            headers={"Content-Type": "application/json"},
        )
        assert posted.status_code in (200, 201), posted.text
    finally:
        err = daemon.stop()
    assert "fleetmem.ingest_run" in {s.name for s in receiver.spans}, err
    assert "fleetmem_episodes_recorded_total" in receiver.metric_names
