"""API tokens for the daemon's JSON API: who may read, and who may also change things.

Three sources of tokens, each with a tier (``read`` or ``control``):

* ``<home>/control.token``: created by the daemon on first start, one line holding a control
  token. The CLI (``--server``) and local scripts read it. It is created with ``O_EXCL`` and
  mode 0600 in one step, and a file that group or others may read is refused, never used.
* tokens minted with ``fleetmem token create``: printed once; only their SHA-256 is kept, in
  ``<home>/api-tokens.jsonl`` (same mode rules).
* ``[server] tokens`` in the global config: each item names a tier and either the token's
  SHA-256 or a token file (same mode rules as ``control.token``).

Every token is bound to exactly one workspace (docs/workspaces.md): the one named when it was
minted or configured, else ``default``. ``control.token`` is bound to ``default`` and is the
operator's: it alone (with a signed-in web session) may create, rename and delete workspaces.

Tokens carry a prefix (``fmc_`` control, ``fmro_`` read) so they are never confused with run
tokens (``fmr_``), login links (``fml_``) or web sessions (``fms_``). Only hashes are compared,
in constant time, against every known hash.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from fleetmem.config import ConfigHolder, ServerToken
from fleetmem.core.facts import DEFAULT_WORKSPACE, check_workspace
from fleetmem.errors import ConfigError, Conflict, InvalidInput

log = logging.getLogger("fleetmem.api_tokens")

CONTROL_TOKEN_FILE = "control.token"
MINTED_TOKENS_FILE = "api-tokens.jsonl"
#: Longest token accepted from a header or a file: anything longer is not one of ours.
MAX_TOKEN_CHARS = 256
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def new_token(prefix: str) -> str:
    """A fresh 256-bit token from the OS CSPRNG, URL-safe, after ``prefix``."""
    return prefix + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What is kept instead of a token: its SHA-256, hex (what ``[server] tokens`` takes)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Tier(enum.Enum):
    """What an API token may do: ``read`` calls only, or every call (``control``)."""

    READ = "read"
    CONTROL = "control"

    @property
    def prefix(self) -> str:
        return "fmc_" if self is Tier.CONTROL else "fmro_"

    def covers(self, needed: Tier) -> bool:
        return self is Tier.CONTROL or needed is Tier.READ


def parse_tier(value: object, field: str = "tier") -> Tier:
    """``"read"`` or ``"control"``; anything else is an error naming ``field``."""
    for tier in Tier:
        if value == tier.value:
            return tier
    raise InvalidInput(field, value, "must be read or control")


@dataclass(frozen=True, slots=True)
class KnownToken:
    """A token the daemon accepts: its hash, its tier, where it was declared, and the
    workspace it is bound to."""

    sha256: str
    tier: Tier
    origin: str  # "control.token", "server.tokens[2]", "minted:ci-reader"
    workspace: str = DEFAULT_WORKSPACE

    @property
    def operator(self) -> bool:
        """The daemon's own control token: it may manage workspaces."""
        return self.origin == CONTROL_TOKEN_FILE


@dataclass(frozen=True, slots=True)
class MintedToken:
    """A token minted by ``fleetmem token create``; the token itself is never stored."""

    name: str
    tier: Tier
    sha256: str
    created_at: float
    workspace: str = DEFAULT_WORKSPACE


# --------------------------------------------------------------------------- files


def _refuse_if_shared(path: Path, mode: int, key: str) -> None:
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            key,
            str(path),
            f"mode {stat.S_IMODE(mode):04o} lets group or others read it; run: chmod 600 {path}",
        )


def read_token_file(path: Path, key: str) -> str:
    """The one token held by a token file, after checking its mode; errors name ``key``,
    the path and the mode."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise ConfigError(key, str(path), "no such token file") from None
    except OSError as exc:
        raise ConfigError(key, str(path), f"cannot open: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(key, str(path), "not a regular file")
        _refuse_if_shared(path, info.st_mode, key)
        raw = handle.read(MAX_TOKEN_CHARS + 2)
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise ConfigError(key, str(path), "does not hold a token (not ASCII)") from None
    if not token or len(token) > MAX_TOKEN_CHARS or any(c.isspace() for c in token):
        raise ConfigError(key, str(path), "must hold one token on one line")
    return token


def ensure_control_token(home: Path) -> str:
    """The control token of ``home``, created on first use: ``O_EXCL`` and mode 0600 at once,
    so the token is never readable by others, not even for a moment."""
    path = home / CONTROL_TOKEN_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return read_token_file(path, CONTROL_TOKEN_FILE)
    token = new_token(Tier.CONTROL.prefix)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(token + "\n")
    log.info("api_tokens.control_created path=%s", path)
    return token


def _read_minted(path: Path) -> list[MintedToken]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return []
    with os.fdopen(fd, "r", encoding="utf-8") as handle:
        _refuse_if_shared(path, os.fstat(handle.fileno()).st_mode, MINTED_TOKENS_FILE)
        lines = handle.read().splitlines()
    out: list[MintedToken] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            out.append(
                MintedToken(
                    name=str(row["name"]),
                    tier=parse_tier(row["tier"]),
                    sha256=str(row["sha256"]),
                    created_at=float(row["created_at"]),
                    # Rows minted before workspaces could be chosen are bound to default.
                    workspace=check_workspace(row.get("workspace", DEFAULT_WORKSPACE)),
                )
            )
        except (ValueError, KeyError, TypeError, InvalidInput):
            raise ConfigError(
                f"{MINTED_TOKENS_FILE}:{number}", line[:60], "is not a minted-token row"
            ) from None
    return out


def _write_minted(path: Path, rows: list[MintedToken]) -> None:
    # A new file (mode 0600 from its creation) replaces the old one in one rename.
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for row in rows:
                data = {
                    "name": row.name,
                    "tier": row.tier.value,
                    "sha256": row.sha256,
                    "created_at": row.created_at,
                    "workspace": row.workspace,
                }
                handle.write(json.dumps(data) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def mint_token(
    home: Path, tier: Tier, name: str, now: float, workspace: str = DEFAULT_WORKSPACE
) -> str:
    """A new API token of ``tier`` bound to ``workspace``, recorded by hash under ``name``;
    returned once. The caller has checked that the workspace exists."""
    if not _NAME.fullmatch(name):
        raise InvalidInput("name", name, "must match [a-z0-9][a-z0-9._-]{0,63}")
    path = home / MINTED_TOKENS_FILE
    rows = _read_minted(path)
    if any(row.name == name for row in rows):
        raise Conflict(
            f"a token named {name} exists; revoke it first or pick another name", existing=name
        )
    token = new_token(tier.prefix)
    rows.append(
        MintedToken(
            name=name,
            tier=tier,
            sha256=token_hash(token),
            created_at=now,
            workspace=check_workspace(workspace),
        )
    )
    _write_minted(path, rows)
    log.info("api_tokens.minted name=%s tier=%s workspace=%s", name, tier.value, workspace)
    return token


def list_minted(home: Path) -> list[MintedToken]:
    """The minted tokens of ``home`` (names, tiers, hashes; never the tokens)."""
    return _read_minted(home / MINTED_TOKENS_FILE)


def revoke_minted(home: Path, name: str) -> MintedToken:
    """Forget the minted token ``name``; a daemon refuses it from its next request."""
    path = home / MINTED_TOKENS_FILE
    rows = _read_minted(path)
    kept = [row for row in rows if row.name != name]
    if len(kept) == len(rows):
        raise InvalidInput("name", name, "no minted token has this name")
    _write_minted(path, kept)
    log.info("api_tokens.revoked name=%s", name)
    return next(row for row in rows if row.name == name)


def minted_for_workspace(home: Path, workspace: str) -> list[MintedToken]:
    """The minted tokens of ``home`` bound to ``workspace``."""
    return [row for row in list_minted(home) if row.workspace == workspace]


def revoke_for_workspace(home: Path, workspace: str) -> list[MintedToken]:
    """Revoke every minted token bound to ``workspace`` (it is being deleted)."""
    path = home / MINTED_TOKENS_FILE
    rows = _read_minted(path)
    gone = [row for row in rows if row.workspace == workspace]
    if gone:
        _write_minted(path, [row for row in rows if row.workspace != workspace])
        log.info("api_tokens.revoked_for_workspace workspace=%s count=%d", workspace, len(gone))
    return gone


def default_name(home: Path, tier: Tier) -> str:
    """``read-1``, ``read-2``, ...: the first free name for a token of ``tier``."""
    taken = {row.name for row in list_minted(home)}
    number = 1
    while f"{tier.value}-{number}" in taken:
        number += 1
    return f"{tier.value}-{number}"


# --------------------------------------------------------------------------- the registry


def configured_tokens(home: Path, items: tuple[ServerToken, ...]) -> list[KnownToken]:
    """``[server] tokens`` as known tokens; a token file is read (and its mode checked) now."""
    out: list[KnownToken] = []
    for i, item in enumerate(items):
        key = f"server.tokens[{i}]"
        tier = parse_tier(item.tier, f"{key}.tier")
        if item.sha256 is not None:
            digest = item.sha256
        else:
            assert item.file is not None  # the config parser requires one of the two
            path = Path(item.file).expanduser()
            digest = token_hash(read_token_file(path if path.is_absolute() else home / path, key))
        workspace = item.workspace or DEFAULT_WORKSPACE
        out.append(
            KnownToken(sha256=digest, tier=tier, origin=item.name or key, workspace=workspace)
        )
    return out


class ApiTokens:
    """The tokens one daemon accepts, kept current without a restart.

    The control token is read once. Minted tokens are re-read when their file changes and
    configured ones when a SIGHUP reload swaps the settings, so ``token create`` and
    ``token revoke`` take effect on the next request.
    """

    def __init__(self, home: Path, config: ConfigHolder) -> None:
        self.home = home
        self._config = config
        self._lock = threading.Lock()
        self.control_path = home / CONTROL_TOKEN_FILE
        self._control = KnownToken(
            token_hash(ensure_control_token(home)), Tier.CONTROL, CONTROL_TOKEN_FILE
        )
        # Fail at start on a bad [server] tokens file, a bad minted file: never start half-open.
        self._settings = config.current
        self._configured = configured_tokens(home, self._settings.server.tokens)
        self._minted_stamp = self._stamp()
        self._minted = self._minted_known()

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(self.home / MINTED_TOKENS_FILE)
        except FileNotFoundError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)

    def _minted_known(self) -> list[KnownToken]:
        return [
            KnownToken(row.sha256, row.tier, f"minted:{row.name}", row.workspace)
            for row in list_minted(self.home)
        ]

    def _refresh(self) -> list[KnownToken]:
        with self._lock:
            settings = self._config.current
            if settings is not self._settings:
                try:
                    self._configured = configured_tokens(self.home, settings.server.tokens)
                except (ConfigError, InvalidInput) as exc:
                    # Fail closed: a token whose file went bad is no longer accepted.
                    log.error("api_tokens.configured_unusable error=%s", exc)
                    self._configured = []
                self._settings = settings
            stamp = self._stamp()
            if stamp != self._minted_stamp:
                try:
                    self._minted = self._minted_known()
                except ConfigError as exc:
                    log.error("api_tokens.minted_unusable error=%s", exc)
                    self._minted = []
                self._minted_stamp = stamp
            return [self._control, *self._configured, *self._minted]

    def tier_of(self, token: str | None) -> Tier | None:
        """The tier of a presented token, or None when it is unknown."""
        found = self.identify(token)
        return None if found is None else found.tier

    def identify(self, token: str | None) -> KnownToken | None:
        """The known token a presented one is (tier, origin, workspace), or None. Every
        known hash is compared (constant time each), so timing does not tell which one was
        close; a token declared twice counts with its first control declaration."""
        if not token or len(token) > MAX_TOKEN_CHARS:
            return None
        given = token_hash(token)
        best: KnownToken | None = None
        for known in self._refresh():
            if hmac.compare_digest(given, known.sha256) and (
                best is None or best.tier is Tier.READ
            ):
                best = known
        return best

    def has_configured(self) -> bool:
        """Whether any token beyond ``control.token`` exists (configured or minted): what
        binding beyond loopback requires."""
        return any(t.origin != CONTROL_TOKEN_FILE for t in self._refresh())
