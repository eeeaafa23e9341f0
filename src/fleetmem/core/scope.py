"""Scopes, repository keys and repository-relative paths (pure: no I/O, no clock).

A scope says who may see a memory: ``workspace`` (the whole tenant), ``project:<repo key>``
(one repository) or ``agent:<name>`` (one agent). A repository key names a repository the
same way on every machine: ``host/owner/repo`` from its origin remote (credentials, scheme,
port and ``.git`` removed), or ``local/<name>-<hash>`` for a checkout without a usable remote.

Strings that reach a scope or a key come from harnesses, git configs and agents, so the checks
here refuse anything that could look like one thing and mean another: whitespace, control and
invisible characters, text that is not NFC-normalised, ``.``/``..`` segments, and credentials.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal, NoReturn

from fleetmem.errors import InvalidInput

_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def unquote(text: str, errors: str = "replace") -> str:
    """Percent-decode like ``urllib.parse.unquote`` (UTF-8; ``errors`` as for bytes.decode).

    Written here so core/ imports nothing from urllib, whose package also holds network code.
    """
    return _PERCENT.sub(
        lambda m: bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8", errors), text
    )


ScopeKind = Literal["workspace", "project", "agent"]

WORKSPACE = "workspace"
MAX_SCOPE_BYTES = 256
# A key must fit in a ``project:`` scope, wherever it came from.
MAX_REPO_KEY_BYTES = MAX_SCOPE_BYTES - len("project:")
MAX_AGENT_NAME_BYTES = 64
MAX_REMOTE_KEY_BYTES = MAX_REPO_KEY_BYTES
_MAX_LOCAL_BASENAME = 64

# The one agent-name rule: config's ``[agent.NAME]`` tables, run records' ``agent`` and every
# ``agent:<name>`` scope use it, so a name one surface accepts is never refused by another.
AGENT_NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
# The whole repository-key rule as one regular expression (no lookarounds, so JSON Schema
# and every regex engine read it alike: the OpenAPI document declares exactly this). A key is
# ASCII: non-ASCII path characters of a remote are kept as upper-case %XX escapes of their
# UTF-8 bytes, so no key can hold a look-alike, invisible or unnormalised character.
_KEY_UNIT = r"(?:[A-Za-z0-9_~+-]|%[89A-F][0-9A-F])"
_KEY_SEGMENT = rf"(?:\.{{0,2}}{_KEY_UNIT}|\.{{3}})(?:\.|{_KEY_UNIT})*"
REPO_KEY_PATTERN = rf"{_KEY_SEGMENT}(?:/{_KEY_SEGMENT})*"
REPO_KEY_RE = re.compile(REPO_KEY_PATTERN)

# Unicode categories that never belong in an identifier: controls, format characters
# (zero-width and bidi overrides), surrogates, private use, unassigned, separators.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
# Letters and symbols that render as blank space although their category looks harmless.
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_TRANSPORT_HELPER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*::")
_URL_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_SCP_LIKE = re.compile(r"(?:(?P<user>[^/]*)@)?(?P<host>[^@/:]+):(?P<path>.*)", re.DOTALL)
_HOST = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")
_SURROGATE_CHAR = re.compile("[\ud800-\udfff]")
_UNSAFE_BASENAME_CHAR = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class Scope:
    """A parsed scope; ``value`` is None for ``workspace`` and required otherwise.

    Construction validates, so every ``Scope`` that exists renders to a string that
    :func:`parse_scope` accepts and parses back to an equal ``Scope``.
    """

    kind: ScopeKind
    value: str | None

    def __post_init__(self) -> None:
        problem = _scope_problem(self.kind, self.value)
        if problem is not None:
            raise InvalidInput("scope", self._render(), problem)

    def __str__(self) -> str:
        return self._render()

    def _render(self) -> str:
        return str(self.kind) if self.value is None else f"{self.kind}:{self.value}"


def parse_scope(text: str) -> Scope:
    """Parse ``workspace``, ``project:<repo key>`` or ``agent:<name>``; raise InvalidInput."""
    if not isinstance(text, str) or not text:
        raise InvalidInput("scope", text, "must be a non-empty string")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SCOPE_BYTES:
        raise InvalidInput("scope", text, f"longer than {MAX_SCOPE_BYTES} bytes")
    problem = _text_problem(text)
    if problem is not None:
        raise InvalidInput("scope", text, problem)
    if text == WORKSPACE:
        return Scope("workspace", None)
    kind, sep, value = text.partition(":")
    if kind == "project":
        return Scope("project", value) if sep else _missing_value(text)
    if kind == "agent":
        return Scope("agent", value) if sep else _missing_value(text)
    if kind == WORKSPACE:
        raise InvalidInput("scope", text, "workspace takes no value")
    raise InvalidInput(
        "scope", text, "unknown scope kind; expected workspace, project:<repo> or agent:<name>"
    )


def project_scope(repo_key: str) -> str:
    """The scope string of a repository: ``project:<repo key>``; raise InvalidInput if bad."""
    validate_repo_key(repo_key)
    return str(Scope("project", repo_key))


def agent_scope(name: str) -> str:
    """The scope string of an agent: ``agent:<name>``; raise InvalidInput if bad."""
    validate_agent_name(name)
    return str(Scope("agent", name))


def validate_agent_name(name: str) -> str:
    """Return ``name`` if it is a valid agent name, else raise InvalidInput("agent", ...).

    Agent names are lower-case ASCII letters, digits, ``.``, ``_`` and ``-``, starting with a
    letter or digit, at most 64 characters (config's ``[agent.NAME]`` rule): they become
    metric labels, file names and config table keys.
    """
    problem = _agent_name_problem(name)
    if problem is not None:
        raise InvalidInput("agent", name, problem)
    return name


def validate_repo_key(key: str) -> str:
    """Return ``key`` if it is a well-formed repository key, else raise InvalidInput("repo", ...).

    A key is 1..256 bytes of ``/``-separated segments, none empty, ``.`` or ``..``; it holds no
    whitespace, control or invisible characters, no URL scheme or ``:``, no ``@`` (credentials),
    no ``\\``, ``?`` or ``#``, and is NFC-normalised.
    """
    problem = _repo_key_problem(key)
    if problem is not None:
        raise InvalidInput("repo", key, problem)
    return key


def repo_key_from_remote(url: str) -> str | None:
    """Normalise a git remote URL to ``host/owner/repo``; None if it is no usable network remote.

    Accepts URLs (``https://``, ``ssh://``, ``git://``, ...; with credentials, ports, queries)
    and scp-like ``[user@]host:path``. The host is lower-cased, the path keeps its case, and a
    trailing ``.git`` and slashes are dropped. Local paths and ``file://`` remotes, empty paths,
    ``..`` segments, control characters and anything else that fails :func:`validate_repo_key`
    give None, so the caller falls back to :func:`local_repo_key`.
    """
    if not isinstance(url, str) or not url or _has_refused_char(url):
        return None
    helper = _TRANSPORT_HELPER.match(url)
    text = url[helper.end() :] if helper else url
    scheme = _URL_SCHEME.match(text)
    if scheme is not None:
        if scheme.group(1).lower() == "file":
            return None
        return _key_from_url_rest(text[scheme.end() :])
    colon, slash = text.find(":"), text.find("/")
    if colon <= 0 or (slash != -1 and slash < colon):
        return None  # a local path, as git reads it
    if re.fullmatch(r"[A-Za-z]", text[:colon]):
        return None  # a drive letter, not a one-letter host
    scp = _SCP_LIKE.fullmatch(text)
    if scp is None:
        return None
    return _key_from_parts(scp.group("host"), scp.group("path"))


def local_repo_key(root: str) -> str:
    """The key of a checkout without a usable remote: ``local/<basename>-<8 hex of sha256(root)>``.

    ``root`` must be absolute; it is normalised (no trailing slash, no ``.``/``..``) before
    hashing. The basename keeps ``[A-Za-z0-9._-]`` (anything else becomes ``-``), is cut to
    64 characters, and is ``repo`` when empty.
    """
    if not isinstance(root, str) or not root.startswith("/"):
        raise InvalidInput("root", root, "must be an absolute path")
    normalised = _normalise_absolute(root)
    digest = hashlib.sha256(normalised.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    base = _UNSAFE_BASENAME_CHAR.sub("-", posixpath.basename(normalised))[:_MAX_LOCAL_BASENAME]
    return f"local/{base or 'repo'}-{digest}"


def relativize(path: str, root: str, cwd: str | None = None) -> str | None:
    """Make ``path`` (from an edit event) relative to the repository ``root``, posix-style.

    A relative ``path`` is joined to ``cwd`` first (to ``root`` when ``cwd`` is None; a relative
    ``cwd`` is itself taken from ``root``). ``.`` and ``..`` are resolved lexically; no file
    system is consulted, so symlinks must be resolved by the caller. Returns None when the
    result is outside ``root`` (``..`` escapes, sibling prefixes), is ``root`` itself, or the
    input holds control characters. ``root`` must be absolute.
    """
    if not isinstance(root, str) or not root.startswith("/"):
        raise InvalidInput("root", root, "must be an absolute path")
    if not path or _CONTROL.search(path):
        return None
    if not path.startswith("/"):
        base = root if cwd is None else cwd
        if _CONTROL.search(base):
            return None
        path = posixpath.join(root, base, path)
    normalised = _normalise_absolute(path)
    base_root = _normalise_absolute(root)
    prefix = base_root if base_root.endswith("/") else base_root + "/"
    if not normalised.startswith(prefix) or normalised == prefix:
        return None
    return normalised[len(prefix) :]


def _normalise_absolute(path: str) -> str:
    # posixpath.normpath keeps a leading "//" (implementation-defined in POSIX); fold it.
    normalised = posixpath.normpath(path)
    return "/" + normalised.lstrip("/")


def _missing_value(text: str) -> NoReturn:
    raise InvalidInput("scope", text, "needs a value after ':'")


def _scope_problem(kind: object, value: str | None) -> str | None:
    if kind == "workspace":
        return None if value is None else "workspace takes no value"
    if kind not in ("project", "agent"):
        return "unknown scope kind; expected workspace, project:<repo> or agent:<name>"
    if not isinstance(value, str) or not value:
        return "needs a value after ':'"
    rendered = f"{kind}:{value}".encode("utf-8", "surrogatepass")
    if len(rendered) > MAX_SCOPE_BYTES:
        return f"longer than {MAX_SCOPE_BYTES} bytes"
    if kind == "project":
        return _repo_key_problem(value)
    return _agent_name_problem(value)


def _agent_name_problem(name: object) -> str | None:
    if not isinstance(name, str) or not name:
        return "agent name must be a non-empty string"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_AGENT_NAME_BYTES:
        return f"agent name longer than {MAX_AGENT_NAME_BYTES} bytes"
    if not AGENT_NAME_PATTERN.fullmatch(name):
        return (
            "agent name must be lower-case ASCII letters, digits, '.', '_' or '-',"
            " starting with a letter or digit"
        )
    return None


def _repo_key_problem(key: object) -> str | None:
    if not isinstance(key, str) or not key:
        return "repository key must be a non-empty string"
    if len(key.encode("utf-8", "surrogatepass")) > MAX_REPO_KEY_BYTES:
        return f"repository key longer than {MAX_REPO_KEY_BYTES} bytes"
    problem = _text_problem(key)
    if problem is not None:
        return problem
    if "://" in key or ":" in key:
        return "must be a repository key like host/owner/repo, not a URL or scp-style remote"
    if "@" in key:
        return "must not contain '@' (credentials)"
    if any(char in key for char in "\\?#"):
        return "must not contain '\\', '?' or '#'"
    for segment in key.split("/"):
        if segment == "":
            return "has an empty path segment"
        if segment in (".", ".."):
            return "has a '.' or '..' path segment"
    if not REPO_KEY_RE.fullmatch(key):
        return (
            "must be '/'-separated segments of ASCII letters, digits, '.', '_', '~', '+', '-'"
            " and %XX escapes of non-ASCII bytes"
        )
    return None


def _text_problem(text: str) -> str | None:
    """Why ``text`` cannot be an identifier: whitespace, control or invisible characters."""
    for char in text:
        if char.isspace():
            return "contains whitespace"
        if unicodedata.category(char) in _REFUSED_CATEGORIES or char in _INVISIBLE:
            return f"contains a control or invisible character (U+{ord(char):04X})"
    return None if unicodedata.is_normalized("NFC", text) else "is not NFC-normalised"


def _has_refused_char(text: str) -> bool:
    return any(
        char.isspace() or unicodedata.category(char) in _REFUSED_CATEGORIES or char in _INVISIBLE
        for char in text
    )


def _escape_non_ascii(path: str) -> str:
    """Non-ASCII characters as upper-case %XX escapes of their UTF-8 bytes; a lone
    surrogate (undecodable input) is left for the key check to refuse."""
    out = []
    for char in path:
        if char.isascii() or _SURROGATE_CHAR.fullmatch(char):
            out.append(char)
        else:
            out.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8")))
    return "".join(out)


def _key_from_url_rest(rest: str) -> str | None:
    """Key from what follows ``scheme://``: ``[userinfo@]host[:port][/path][?query][#fragment]``."""
    end = len(rest)
    for stop in "/?#":
        found = rest.find(stop)
        if found != -1:
            end = min(end, found)
    netloc, tail = rest[:end], rest[end:]
    if "@" in tail:
        # An '@' after the authority means a credential we failed to isolate: refuse it.
        return None
    path = re.split(r"[?#]", tail, maxsplit=1)[0]
    hostport = netloc.rpartition("@")[2]
    if hostport.startswith("["):
        return None  # an IPv6 literal cannot be a key segment (':')
    host, _, port = hostport.partition(":")
    if port and not (port.isascii() and port.isdigit()):
        return None
    return _key_from_parts(host, path)


def _key_from_parts(host: str, path: str) -> str | None:
    host = host.lower().rstrip(".")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    if not _HOST.fullmatch(host):
        return None
    try:
        # Decode %XX strictly so that an escaped ``%2e%2e`` is seen, and refused, as ``..``.
        path = unquote(path, errors="strict")
    except UnicodeDecodeError:
        return None
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")].rstrip("/")
    if not path:
        return None
    key = f"{host}/{_escape_non_ascii(unicodedata.normalize('NFC', path))}"
    if len(key.encode("utf-8", "surrogatepass")) > MAX_REMOTE_KEY_BYTES:
        return None
    if _repo_key_problem(key) is not None:
        return None
    return key
