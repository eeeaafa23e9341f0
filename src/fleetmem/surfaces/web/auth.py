"""Browser sign-in for the web UI: one-time login links, sessions and CSRF tokens.

``fleetmem serve`` prints a login link carrying a random token. Opening it (once, within
:data:`LOGIN_TTL_S`) trades the token for a session cookie (HttpOnly, SameSite=Strict). Every
state-changing request of a session carries the session's CSRF token, checked here in constant
time. Sessions live in the daemon's memory: restarting the daemon signs everyone out, and it
prints a fresh link.

Only hashes of tokens are kept, so a memory dump does not hand out sessions. This module knows
nothing about pages: the API-token work can reuse :func:`new_token`, :func:`token_hash` and
:func:`same_token` for its bearer tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from fleetmem.core.facts import DEFAULT_WORKSPACE

#: A login link works once, for this long.
LOGIN_TTL_S = 15 * 60.0
#: A session ends after this long without a request ...
SESSION_IDLE_S = 12 * 3600.0
#: ... and in any case after this long.
SESSION_MAX_S = 7 * 86_400.0
#: Unused login links kept at once; the oldest goes first.
MAX_PENDING_LINKS = 8
#: A new link may be printed on request at most this often.
NEW_LINK_INTERVAL_S = 5.0

SESSION_COOKIE = "fleetmem_session"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"


def new_token(prefix: str = "") -> str:
    """A fresh 256-bit token from the OS CSPRNG, URL-safe."""
    return prefix + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What is stored instead of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same_token(given: str | None, expected: str) -> bool:
    """Compare two tokens in constant time; a missing one never matches."""
    if not given:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in browser. ``csrf`` is sent back with every form and state-changing call;
    ``workspace`` is the one workspace its pages and API calls act in (the switcher changes
    it)."""

    csrf: str
    created_at: float
    last_seen_at: float
    workspace: str = DEFAULT_WORKSPACE


class WebAuth:
    """Login links and sessions of one daemon, in memory; safe to use from many threads."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._links: dict[str, float] = {}  # token hash -> expires at
        self._sessions: dict[str, Session] = {}  # token hash -> session
        self._last_link_at: float | None = None
        self._announce: Callable[[], None] | None = None

    def set_announcer(self, announce: Callable[[], None]) -> None:
        """How a new login link reaches the operator (``fleetmem serve`` prints it)."""
        self._announce = announce

    def announce_new_link(self) -> bool:
        """Print a fresh login link where the daemon runs, if an announcer is set and the last
        link is a few seconds old; True when one was printed. A visitor can ask for this, but
        only someone who sees the daemon's output can use it."""
        if self._announce is None or not self.may_print_new_link():
            return False
        self._announce()
        return True

    # ---- login links ------------------------------------------------------------------
    def new_login_token(self) -> str:
        """A one-time login token, valid for :data:`LOGIN_TTL_S`."""
        token = new_token("fml_")
        now = self._clock()
        with self._lock:
            self._drop_expired(now)
            while len(self._links) >= MAX_PENDING_LINKS:
                oldest = min(self._links, key=self._links.__getitem__)
                del self._links[oldest]
            self._links[token_hash(token)] = now + LOGIN_TTL_S
            self._last_link_at = now
        return token

    def may_print_new_link(self) -> bool:
        """Whether a visitor may ask for a new link now (at most one per few seconds)."""
        with self._lock:
            last = self._last_link_at
        return last is None or self._clock() - last >= NEW_LINK_INTERVAL_S

    def redeem(self, token: str | None) -> tuple[str, Session] | None:
        """Trade a login token for a session: ``(session token, session)``, or None when the
        token is unknown, used or expired. A token works once."""
        if not token or len(token) > 200:
            return None
        now = self._clock()
        with self._lock:
            self._drop_expired(now)
            expires = self._links.pop(token_hash(token), None)
            if expires is None:
                return None
            session_token = new_token("fms_")
            session = Session(csrf=new_token(), created_at=now, last_seen_at=now)
            self._sessions[token_hash(session_token)] = session
        return session_token, session

    # ---- sessions -----------------------------------------------------------------------
    def session(self, session_token: str | None) -> Session | None:
        """The live session of a cookie value (its idle clock restarts), or None."""
        if not session_token or len(session_token) > 200:
            return None
        key = token_hash(session_token)
        now = self._clock()
        with self._lock:
            found = self._sessions.get(key)
            if found is None:
                return None
            if now - found.last_seen_at > SESSION_IDLE_S or now - found.created_at > SESSION_MAX_S:
                del self._sessions[key]
                return None
            found = replace(found, last_seen_at=now)
            self._sessions[key] = found
        return found

    def switch(self, session_token: str | None, workspace: str) -> Session | None:
        """Bind a live session to ``workspace`` (the caller has checked it exists); the
        session, or None when it is not live."""
        if not session_token or len(session_token) > 200:
            return None
        key = token_hash(session_token)
        with self._lock:
            found = self._sessions.get(key)
            if found is None:
                return None
            found = replace(found, workspace=workspace)
            self._sessions[key] = found
        return found

    def unbind(self, workspace: str) -> int:
        """Move every session bound to ``workspace`` (deleted) back to the default one;
        how many were moved."""
        with self._lock:
            moved = [k for k, s in self._sessions.items() if s.workspace == workspace]
            for key in moved:
                self._sessions[key] = replace(self._sessions[key], workspace=DEFAULT_WORKSPACE)
        return len(moved)

    def check_csrf(self, session: Session, given: str | None) -> bool:
        return same_token(given, session.csrf)

    def end(self, session_token: str | None) -> None:
        """Sign a session out (nothing happens for an unknown one)."""
        if session_token:
            with self._lock:
                self._sessions.pop(token_hash(session_token), None)

    def counts(self) -> dict[str, int]:
        with self._lock:
            self._drop_expired(self._clock())
            return {"sessions": len(self._sessions), "login_links": len(self._links)}

    def _drop_expired(self, now: float) -> None:
        for key in [k for k, until in self._links.items() if until <= now]:
            del self._links[key]
        for key in [
            k
            for k, s in self._sessions.items()
            if now - s.last_seen_at > SESSION_IDLE_S or now - s.created_at > SESSION_MAX_S
        ]:
            del self._sessions[key]


def login_url(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/login?token={token}"
