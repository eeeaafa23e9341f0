"""Signing in: one-time login links, session cookies, CSRF. The unit tests need no browser;
the daemon tests speak HTTP to a real ``fleetmem serve``."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import httpx
import pytest

from fleetmem.surfaces.web.auth import (
    LOGIN_TTL_S,
    MAX_PENDING_LINKS,
    SESSION_IDLE_S,
    SESSION_MAX_S,
    WebAuth,
    same_token,
    token_hash,
)
from tests.web.conftest import WebDaemon


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_login_token_works_once_and_expires() -> None:
    clock = Clock()
    auth = WebAuth(clock=clock)
    token = auth.new_login_token()
    assert token.startswith("fml_") and len(token) > 40
    redeemed = auth.redeem(token)
    assert redeemed is not None
    session_token, session = redeemed
    assert auth.redeem(token) is None  # single use
    assert auth.session(session_token) == session
    late = auth.new_login_token()
    clock.now += LOGIN_TTL_S + 1
    assert auth.redeem(late) is None  # short expiry
    assert auth.redeem(None) is None and auth.redeem("x" * 500) is None


def test_sessions_end_when_idle_or_old_and_on_sign_out() -> None:
    clock = Clock()
    auth = WebAuth(clock=clock)
    redeemed = auth.redeem(auth.new_login_token())
    assert redeemed is not None
    token, _ = redeemed
    clock.now += SESSION_IDLE_S - 10
    assert auth.session(token) is not None  # a request restarts the idle clock
    clock.now += SESSION_IDLE_S - 10
    assert auth.session(token) is not None
    clock.now += SESSION_MAX_S
    assert auth.session(token) is None
    again = auth.redeem(auth.new_login_token())
    assert again is not None
    auth.end(again[0])
    assert auth.session(again[0]) is None
    assert auth.session("fms_unknown") is None and auth.session(None) is None


def test_csrf_and_token_helpers() -> None:
    auth = WebAuth()
    redeemed = auth.redeem(auth.new_login_token())
    assert redeemed is not None
    _, session = redeemed
    assert auth.check_csrf(session, session.csrf)
    assert not auth.check_csrf(session, session.csrf[:-1] + "x")
    assert not auth.check_csrf(session, None) and not auth.check_csrf(session, "")
    assert same_token("abc", "abc") and not same_token("abc", "abd")
    assert token_hash("a") != token_hash("b") and len(token_hash("a")) == 64


def test_pending_links_are_bounded_and_new_links_are_rate_limited() -> None:
    clock = Clock()
    auth = WebAuth(clock=clock)
    printed: list[str] = []
    auth.set_announcer(lambda: printed.append(auth.new_login_token()))
    assert auth.announce_new_link()
    assert not auth.announce_new_link()  # a few seconds apart at most
    clock.now += 10
    assert auth.announce_new_link()
    tokens = [auth.new_login_token() for _ in range(MAX_PENDING_LINKS + 3)]
    assert auth.counts()["login_links"] == MAX_PENDING_LINKS
    assert auth.redeem(tokens[0]) is None  # the oldest went first
    assert auth.redeem(tokens[-1]) is not None


@pytest.fixture
def daemon(start_daemon: Callable[..., WebDaemon]) -> WebDaemon:
    return start_daemon()


def test_daemon_prints_a_one_time_link_that_sets_a_strict_cookie(daemon: WebDaemon) -> None:
    assert any("fleetmem serving on" in line for line in daemon.lines)
    link = daemon.links()[0]
    assert "token=" not in daemon.stderr()  # printed, never logged
    with httpx.Client(base_url=daemon.url) as browser:
        r = browser.get("/memory")
        assert r.status_code == 303 and r.headers["location"] == "/login"
        page = browser.get("/login")
        assert "Open the login link printed by" in page.text and "fleetmem serve" in page.text
        r = browser.get(link.replace(daemon.url, ""))
        assert r.status_code == 303 and r.headers["location"] == "/memory"
        cookie = r.headers["set-cookie"]
        assert "fleetmem_session=" in cookie
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        assert browser.get("/memory").status_code == 200
        assert browser.get("/login").status_code == 303  # already signed in
        # The page's security headers.
        headers = browser.get("/memory").headers
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY" and headers["referrer-policy"] == "no-referrer"
    with httpx.Client(base_url=daemon.url) as other:
        r = other.get(link.replace(daemon.url, ""))
        assert r.status_code == 401 and "already used" in r.text


def test_every_state_change_needs_the_csrf_token(daemon: WebDaemon) -> None:
    with httpx.Client(base_url=daemon.url) as browser:
        browser.get(daemon.links()[0].replace(daemon.url, ""))
        page = browser.get("/memory").text
        match = re.search(r'name="csrf-token" content="([^"]+)"', page)
        assert match is not None
        csrf = match.group(1)
        form = {"body": "Deploys freeze on Fridays."}
        r = browser.post("/memory/facts", data=form)
        assert r.status_code == 403 and "security token" in r.text
        r = browser.post("/memory/facts", data={**form, "csrf": "wrong"})
        assert r.status_code == 403
        r = browser.post(
            "/memory/facts", data={**form, "csrf": csrf}, headers={"Origin": "http://evil.test"}
        )
        assert r.status_code == 403
        assert daemon.client.get("/api/v1/facts/counts").json()["live"] == 0  # nothing written
        r = browser.post("/memory/facts", data={**form, "csrf": csrf})
        assert r.status_code == 303 and "done=added" in r.headers["location"]
        r = browser.post(
            "/memory/facts",
            data={"body": "Tags are immutable."},
            headers={"X-CSRF-Token": csrf, "Accept": "application/json"},
        )
        assert r.status_code == 201 and r.json()["fact"]["status"] == "active"
        assert browser.post("/logout", data={"csrf": csrf}).status_code == 303
        assert browser.get("/memory").status_code == 303
        r = browser.post("/memory/facts", data={**form, "csrf": csrf})
        assert r.status_code == 303 and r.headers["location"] == "/login"


def test_the_login_page_prints_a_new_link_where_the_daemon_runs(daemon: WebDaemon) -> None:
    time.sleep(5.1)  # at most one new link every few seconds
    with httpx.Client(base_url=daemon.url) as visitor:
        r = visitor.post("/login/new-link")
        assert r.status_code == 303 and r.headers["location"] == "/login?sent=1"
        assert "token=" not in r.text
    deadline = time.monotonic() + 5
    while len(daemon.links()) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    fresh = daemon.links()[-1]
    with httpx.Client(base_url=daemon.url) as browser:
        assert browser.get(fresh.replace(daemon.url, "")).status_code == 303
        assert browser.get("/memory/status").status_code == 200


def test_pages_stay_out_of_the_openapi_document(daemon: WebDaemon) -> None:
    r = daemon.client.get("/openapi.json")
    assert r.status_code == 200
    paths = r.json()["paths"]
    assert not [p for p in paths if p.startswith(("/memory", "/login", "/logout"))]
    assert daemon.client.get("/static/app.css").status_code == 200
