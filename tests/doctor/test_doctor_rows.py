"""The doctor's REQ-18/19 rows against real homes: degraded recalls, privacy notes, vectors."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from fleetmem.service.bootstrap import App, build
from fleetmem.service.doctor import exit_code, run_checks
from fleetmem.store.sqlite.store import SqliteStore
from tests.conftest import EXAMPLE
from tests.providers.conftest import config, stdio_upstream
from tests.surfaces.cli_helpers import run_cli

SCOPE = "project:github.com/acme/api"


def rows(app: App, **kw: Callable[[], float]) -> dict[str, tuple[str, str]]:
    return {c.name: (c.status, c.detail) for c in run_checks(app, **kw)}


def dying_provider(tmp_path: Path) -> str:
    """A stdio provider that exits during every recall: each recall is answered degraded."""
    upstream = stdio_upstream("ref", "--store", str(tmp_path / "ref.json"), "--misbehave", "die")
    return config(upstream, provider="ref", timeout="3s")


def test_no_degraded_recall_is_an_ok_row(make_app: Callable[..., App]) -> None:
    app = make_app()
    app.memory.ingest_run(EXAMPLE.read_bytes())
    result = app.memory.recall("settlement", scopes=[SCOPE])
    assert result.degraded is None
    assert rows(app)["degraded recalls"] == ("ok", "none in the last 24 h")


def test_degraded_recalls_warn_with_count_and_reason_and_survive_a_restart(
    make_app: Callable[..., App], home: Path, tmp_path: Path
) -> None:
    app = make_app(dying_provider(tmp_path))
    for _ in range(2):
        assert app.memory.recall("settlement", scopes=[SCOPE]).degraded == "provider_unavailable"
    status, detail = rows(app)["degraded recalls"]
    assert status == "warn"
    assert detail == "2 in the last 24 h, mostly provider_unavailable (2)"
    # The record is durable: another App over the same home (as after a restart) sees it.
    again = build(home, {"HOME": str(home.parent)})
    try:
        assert rows(again)["degraded recalls"][0] == "warn"
        # A day later the window is empty again.
        later = time.time() + 86400 + 60
        assert rows(again, wall=lambda: later)["degraded recalls"] == (
            "ok",
            "none in the last 24 h",
        )
    finally:
        again.close()


def test_degraded_row_names_the_main_reason_first(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    store.db.migrate()
    try:
        now = 1_000_000.0
        for reason in ("timeout", "provider_unavailable", "provider_unavailable"):
            store.note_degraded_recall(at=now, provider="zep", reason=reason)
        store.note_degraded_recall(at=now - 90_000, provider="zep", reason="timeout")
        assert store.degraded_recalls_since(now - 86400) == [
            ("provider_unavailable", 2),
            ("timeout", 1),
        ]
        # Rows past the 30-day keep are pruned by the next write.
        store.note_degraded_recall(at=now + 31 * 86400, provider="zep", reason="timeout")
        assert store.degraded_recalls_since(0) == [("timeout", 1)]
    finally:
        store.close()


def test_the_degraded_row_shows_in_the_cli_json_and_warns_without_failing(
    make_app: Callable[..., App], home: Path, tmp_path: Path
) -> None:
    app = make_app(dying_provider(tmp_path))
    app.memory.recall("settlement", scopes=[SCOPE])
    # The CLI is a separate process reading the same home's durable record.
    proc = run_cli(home, "doctor", "--json", check=False)
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["degraded recalls"]["status"] == "warn"
    assert "provider_unavailable (1)" in checks["degraded recalls"]["detail"]
    text = run_cli(home, "doctor", check=False).stdout
    assert "WARN  degraded recalls" in text


def test_http_provider_note_names_its_host(make_app: Callable[..., App]) -> None:
    app = make_app(
        config('[mcp.zep]\nurl = "http://127.0.0.1:9/mcp"\n', provider="zep", timeout="1s")
    )
    checks = rows(app)
    assert checks["provider privacy"] == ("note", "episodes leave this host for 127.0.0.1")
    assert checks["provider"][1].startswith("zep: ")


def test_stdio_provider_note_says_fleetmem_cannot_see_its_network(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    upstream = stdio_upstream("ref", "--store", str(tmp_path / "ref.json"))
    app = make_app(config(upstream, provider="ref"))
    checks = rows(app)
    status, detail = checks["provider privacy"]
    assert status == "note" and "cannot see whether it calls a network service" in detail
    assert checks["provider"][0] == "ok" and "contract 1" in checks["provider"][1]


def test_builtin_provider_has_no_privacy_note_and_vectors_row_says_off(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    checks = rows(app)
    assert "provider privacy" not in checks
    assert checks["vectors"] == ("info", "no embedding model is set: episodes are not embedded")
    assert exit_code(run_checks(app)) == 0


def test_every_row_reaches_the_web_status_page(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    from fastapi.testclient import TestClient

    from fleetmem.surfaces.http.app import create_app

    app = make_app(dying_provider(tmp_path))
    app.memory.recall("settlement", scopes=[SCOPE])
    checks = run_checks(app)
    api = create_app(app)
    with TestClient(api) as client:
        token = api.state.web_auth.new_login_token()
        assert client.get(f"/login?token={token}").status_code == 200
        response = client.get("/memory/status")
    assert response.status_code == 200
    page = response.text
    for check in checks:
        row_id = check.name.replace(" ", "-")
        # The dying provider's own state moves between the two readings; every other row's
        # status is stable.
        status = "" if check.name == "provider" else f' class="check-{check.status}"'
        assert f'id="{row_id}"{status}' in page, check
    assert "mostly provider_unavailable (1)" in page
