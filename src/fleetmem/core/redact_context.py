"""Secrets the redactor recognises by their context: URLs, headers, command lines, configs.

A value here is a secret because of what stands before it (``password=``, ``Authorization:``,
``user:pass@``, ``curl -u``, ``sshpass -p``), not because of its own shape. Only the value is
replaced, so ``password=[REDACTED]`` still says what was there. The key = value forms of
.env, YAML (block scalars included), TOML, INI, JSON, Java properties and command-line
options live in :mod:`redact_assign`; this module holds the forms that are not assignments.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fleetmem.core.lazy_pattern import LazyPattern
from fleetmem.core.redact_base import (
    Rule,
    Span,
    has_digit,
    is_placeholder,
    random_value,
    regex_finder,
    rx,
    rx_folded,
    trim_end,
)

# Unquoted words that are types, nulls or booleans in code and config, not secrets.
NOT_SECRET = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "str",
        "string",
        "bytes",
        "int",
        "any",
        "optional",
        "required",
        "secretstr",
        "bool",
        "float",
        "dict",
        "list",
        "object",
    }
)

# --- URLs and DSNs ----------------------------------------------------------------------------

# scheme://user:password@host, for any scheme (postgres, mongodb+srv, amqps, redis, ftp, ...).
# Starts at the literal "://"; the user part cannot contain ':' and the password cannot
# contain '/', so each attempt scans only up to the next "://". The password run backtracks to
# the last '@' of the authority ("p@ss" is common).
_URL_CREDENTIALS_RE = rx(
    r"://(?<=[A-Za-z0-9]://)[^\s:/@?#]*+:(?P<s>[^\s/?#]+)@(?=[A-Za-z0-9]|\[[0-9A-Fa-f]*:)"
)
# scheme://TOKEN@host: a token as the whole userinfo (git remotes, some webhooks, DSNs).
# Each lookbehind stands after the literal it guards, so `re` finds the literal by its fast
# substring search; a pattern that opens with a lookbehind is tried at every position.
_URL_TOKEN_USER_RE = rx(r"://(?<=[A-Za-z0-9]://)(?P<s>[A-Za-z0-9_.~%-]{16,}+)@(?=[A-Za-z0-9])")
# XML elements named like a secret: <password>...</password>, <apiKey>...</apiKey>.
_XML_ELEMENT_RE = rx_folded(
    r"""<[a-z0-9_.:-]{0,40}(?:password|passwd|secret|token|api[_-]?key|credentials?)>
        (?P<s>[^<\n]{1,512}+)</"""
)
# Azure shared access signatures: the signature is the secret part of a SAS URL or token.
_SAS_SIG_RE = rx(r"sig=(?<=[?&;]sig=)(?P<s>[A-Za-z0-9%+/=_-]{16,})")

# --- headers ----------------------------------------------------------------------------------

_AUTH_SCHEMES = r"bearer|token|bot|basic|apikey|api-key|key|digest|hmac|signature|aws4-hmac-sha256"
_AUTHORIZATION_RE = rx_folded(
    rf"""authorization (?:\\?["'`])? [\x20\t]{{0,16}} [:=] [\x20\t]{{0,16}} (?:\\?["'`])?
      (?: (?:bearer|token|bot|basic|apikey|api-key|key|sso-key) [\x20\t]{{1,16}}
            (?P<tok>[A-Za-z0-9._~+/=:-]+)
        | (?:digest|hmac|signature|aws4-hmac-sha256) [\x20\t]{{1,16}} (?P<params>[^\n]+)
        | (?!(?:{_AUTH_SCHEMES})\b) (?P<raw>[^\s"'`,;()\[\]]{{8,}}) )"""
)
_BEARER_RE = rx_folded(
    r"bearer(?<![A-Za-z0-9_\]-]bearer)[\x20\t]{1,16}(?P<s>[A-Za-z0-9._~+/-]{20,}=*)"
)


def _auth_value_ok(value: str) -> bool:
    return not is_placeholder(value) and value.lower() not in NOT_SECRET


def _bearer_ok(value: str) -> bool:
    # Standalone "Bearer <x>" in prose is common; real tokens practically always hold a digit.
    return has_digit(value) and not is_placeholder(value)


# --- keys named in JSON and YAML documents ----------------------------------------------------

_AWS_SECRET_RE = rx_folded(
    r"""aws[_.-]?secret[_.-]?(?:access[_.-]?)?key (?:\\?["'`])? [\x20\t]{0,16}
        (?::=|=>|[:=]) [\x20\t]{0,16} (?:\\?["'`])?
        (?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=\[])"""
)
# A GCP service-account JSON names its key pair; the id is 40 hex digits.
_PRIVATE_KEY_ID_RE = rx_folded(
    r"""private[_-]?key[_-]?id (?:\\?["'])? [\x20\t]{0,16} [:=] [\x20\t]{0,16} (?:\\?["'])?
        (?P<s>[0-9a-f]{32,64})(?![0-9a-z])"""
)
# kubeconfig users: client-key-data is a base64 PEM private key.
_KUBE_KEY_DATA_RE = rx_folded(
    r"""client[_-]key[_-]data (?:["'])? [\x20\t]{0,16} : [\x20\t]{0,16} (?:["'])?
        (?P<s>[a-z0-9+/=]{16,})"""
)
# ~/.docker/config.json: "auth" is base64 of user:password.
_DOCKER_AUTH_RE = rx(
    r""""auth" [\x20\t]{0,16} : [\x20\t]{0,16} "(?P<s>[A-Za-z0-9+/]{8,}={0,2})" """
)

# --- command lines ----------------------------------------------------------------------------

# curl -u user:pass, curl --user user:pass, wget --http-password=... is an assignment.
_USER_OPTION_RE = rx(
    r"""-(?<![A-Za-z0-9_-]-)(?:u|U|-user|-proxy-user)(?:[\x20\t]{1,8}|=)(?:["'])?
        [^\s:"']{1,128}+:(?P<s>[^\s"']+)"""
)
# mysql -pPASS (no space: "-p PASS" would prompt), sshpass -p PASS (space allowed).
_GLUED_P_RE = rx(
    r"""-p(?<=[\x20\t]-p)(?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|(?P<s>[^\s"'-][^\s"']*))"""
)
_SPACED_P_RE = rx(
    r"""-p(?<=[\x20\t]-p)[\x20\t]{0,8}(?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|(?P<s>[^\s"'-][^\s"']*))"""
)
_MYSQL_RE = re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mysqlsh|mariadb|mariadb-dump)\b", re.ASCII)
_SSHPASS_RE = re.compile(r"\bsshpass\b", re.ASCII)
# ~/.netrc: machine HOST login USER password PASS, on one line or several.
_NETRC_RE = rx(
    r"""login(?<![A-Za-z0-9_]login)[\x20\t\n]{1,64}[^\s]{1,256}+[\x20\t\n]{1,64}
        (?:account[\x20\t\n]{1,64}[^\s]{1,256}+[\x20\t\n]{1,64})?
        password[\x20\t\n]{1,64}(?P<s>[^\s]+)"""
)


def _line_option_spans(text: str, anchor: re.Pattern[str], option: LazyPattern) -> Iterator[Span]:
    """Spans of ``option`` values on the lines (command lines) where ``anchor`` occurs."""
    pos = 0
    while (found := anchor.search(text, pos)) is not None:
        line_end = text.find("\n", found.end())
        if line_end < 0:
            line_end = len(text)
        for match in option.finditer(text, found.end(), line_end):
            for group in ("s", "dq", "sq"):
                start, end = match.span(group)
                if start >= 0:
                    end = trim_end(text, start, end)
                    if end > start and not is_placeholder(text[start:end]):
                        yield start, end
                    break
        pos = line_end


def _find_mysql(text: str, lowered: str | None) -> Iterator[Span]:
    return _line_option_spans(text, _MYSQL_RE, _GLUED_P_RE)


def _find_sshpass(text: str, lowered: str | None) -> Iterator[Span]:
    return _line_option_spans(text, _SSHPASS_RE, _SPACED_P_RE)


def _not_placeholder(value: str) -> bool:
    return not is_placeholder(value)


CONTEXT_RULES: tuple[Rule, ...] = (
    Rule("aws_secret_access_key", ("aws",), regex_finder(_AWS_SECRET_RE)),
    Rule("gcp_private_key_id", ("key_id", "key-id", "keyid"), regex_finder(_PRIVATE_KEY_ID_RE)),
    Rule("kubeconfig_client_key", ("key-data", "key_data"), regex_finder(_KUBE_KEY_DATA_RE)),
    Rule("docker_config_auth", ('"auth"',), regex_finder(_DOCKER_AUTH_RE)),
    Rule("azure_sas_signature", ("sig=",), regex_finder(_SAS_SIG_RE)),
    Rule("url_credentials", ("://",), regex_finder(_URL_CREDENTIALS_RE), specific=False),
    Rule(
        "url_token_userinfo",
        ("://",),
        regex_finder(_URL_TOKEN_USER_RE, check=random_value),
        specific=False,
    ),
    Rule(
        "xml_secret_element",
        ("password>", "passwd>", "secret>", "token>", "key>", "credential>", "credentials>"),
        regex_finder(_XML_ELEMENT_RE, check=_not_placeholder),
        specific=False,
    ),
    Rule(
        "authorization_header",
        ("authorization",),
        regex_finder(_AUTHORIZATION_RE, ("tok", "params", "raw"), _auth_value_ok),
        specific=False,
    ),
    Rule("bearer_token", ("bearer",), regex_finder(_BEARER_RE, check=_bearer_ok), False),
    Rule(
        "command_line_credentials",
        ("-u", "--user", "--proxy-user"),
        regex_finder(_USER_OPTION_RE, check=_not_placeholder),
        specific=False,
    ),
    Rule("mysql_password_option", ("mysql", "mariadb"), _find_mysql, specific=False),
    Rule("sshpass_password", ("sshpass",), _find_sshpass, specific=False),
    Rule("netrc_password", ("login",), regex_finder(_NETRC_RE, check=_not_placeholder), False),
)

__all__ = ["CONTEXT_RULES", "NOT_SECRET"]
