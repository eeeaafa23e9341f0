"""What an error message or a log line may show of a value that came from outside.

Errors name the field and describe the bad value so a person can fix it; but the value may
be a credential (a URL with a password, an API key pasted into the wrong key, a token in a
label). The rules here decide how much of it is shown:

* a configuration key whose name says it holds a credential (``*_key``, ``*token*``,
  ``*password*``, ``*secret*``, ``*credential*``, ``authorization``...) never shows its value,
  only its type and length;
* any other value is shown with the userinfo of every URL in it replaced by ``***`` and then
  passed through the redactor, bounded in length.

Pure: the standard library and the redactor only (``fleetmem.errors`` imports this module).
"""

from __future__ import annotations

import re

from fleetmem.core.redact import redact

#: Words that, in the last segment of a configuration key, mean its value is a credential.
_CREDENTIAL_WORDS = (
    "token",
    "password",
    "passwd",
    "passphrase",
    "secret",
    "credential",
    "apikey",
    "api_key",
    "api-key",
    "private",
    "authorization",
    "cookie",
)
_CREDENTIAL_KEY = re.compile(r"(?:^|[_\-])(?:key|pwd|pass|auth)s?$")

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")

# scheme://userinfo@ : everything between the scheme and the last '@' before the host.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{0,31}://)[^/?#\s@]*@")


def is_credential_key(key: str) -> bool:
    """Whether configuration key ``key`` (``table.key`` or a bare name) names a credential.

    Judged on its last dotted segment: ``model_api.api_key``, ``server.tokens``,
    ``mcp.github.env.GITHUB_TOKEN``, ``db_password``, ``signing-secret``, ``key`` are;
    ``api_key_env`` (the *name* of a variable) is too, because a user may put the key itself
    there by mistake.
    """
    last = key.rsplit(".", 1)[-1].lower()
    return any(word in last for word in _CREDENTIAL_WORDS) or bool(_CREDENTIAL_KEY.search(last))


def hide_userinfo(text: str) -> str:
    """``text`` with the ``user:password@`` part of every URL replaced by ``***@``."""
    return _USERINFO.sub(r"\1***@", text)


def hidden(value: object) -> str:
    """A description of a value that must not be shown: its type and, for text, its length."""
    if isinstance(value, str):
        return f"<hidden: {len(value)} characters>"
    return f"<hidden {type(value).__name__}>"


def show(value: object, limit: int = 80) -> str:
    """A bounded ``repr`` of ``value`` with URL userinfo hidden and secrets redacted."""
    text = redact(hide_userinfo(repr(value)))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show_config(key: str, value: object, limit: int = 80) -> str:
    """What a configuration error may show of ``key``'s value (see the module's rules).

    A ``*_env`` key (``api_key_env``) names a variable: its value is shown when it has the
    shape of a variable name and holds no secret, and hidden otherwise (a key pasted there).
    """
    if is_credential_key(key):
        last = key.rsplit(".", 1)[-1].lower()
        if not (
            last.endswith("_env")
            and isinstance(value, str)
            and _ENV_NAME.fullmatch(value)
            and redact(value) == value
        ):
            return hidden(value)
    return show(value, limit)
