"""The redactor's rule table: one entry per kind of secret, each with the finder that spots it.

:mod:`fleetmem.core.redact` runs these after stripping invisible characters, merges the spans
they report and names what fired. The constraints the module docstring there sets out (pure,
never raising, linear-ish time, our own rules) bind every finder here: each starts with a
literal the prefilter can test, and no run that something must follow is left unbounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: What a secret is replaced by. A value that already starts with it was redacted before and
#: is not reported again (redacting twice changes nothing).
REDACTED: str = "[REDACTED]"

_Span = tuple[int, int]
# A finder gets the text and, when lowercasing kept every character at its index (true unless
# the text holds one of the few characters whose lowercase is longer, like U+0130), the
# lowercased text; case-insensitive rules search the latter with a case-sensitive pattern,
# which is several times faster in `re` than IGNORECASE.
_Finder = Callable[[str, str | None], Iterator[_Span]]


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of secret.

    ``triggers`` are lowercase literals of which at least one must occur in the lowercased text
    for the rule to run at all (a C-speed substring test that makes most rules free on most
    text). ``specific`` rules identify a token by its own shape; the others (assignments,
    headers, URLs) identify it by context, and find_secrets prefers the specific name when
    both fire on the same span.
    """

    name: str
    triggers: tuple[str, ...]
    find: _Finder
    specific: bool = True


_QUOTE_CHARS = "\"'`"
# Characters that at least one key/value rule accepts inside a value but a human puts after
# one: a sentence-ending dot stays outside the redaction.
_TRAILING = "."

_UPPER_OR_DIGIT = re.compile(r"[A-Z0-9]", re.ASCII)
_DIGIT = re.compile(r"[0-9]", re.ASCII)


def _looks_random(value: str) -> bool:
    # Real keys mix case or carry digits; "sk-learn-style-kebab-case-words" does neither.
    return _UPPER_OR_DIGIT.search(value) is not None


def _has_digit(value: str) -> bool:
    return _DIGIT.search(value) is not None


# Values that are references to a secret, not the secret: ${VAR}, $(cmd), {{ var }}, {% %},
# <%= %>, %(name)s, $VAR, <placeholder>. Matched against the text at the value's start, since
# an unquoted value stops at the "{" or "(" that opens the reference.
_PLACEHOLDER_OPEN_RE = re.compile(r"\$\{|\$\(|\{\{|\{%|<%|%\(", re.ASCII)
_PLACEHOLDER_WHOLE_RE = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*\Z|<[^<>\n]*>\Z", re.ASCII)


def _is_placeholder(value: str) -> bool:
    return (
        _PLACEHOLDER_OPEN_RE.match(value) is not None
        or _PLACEHOLDER_WHOLE_RE.match(value) is not None
    )


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    return end


def _regex_finder(
    pattern: re.Pattern[str] | tuple[re.Pattern[str], re.Pattern[str]],
    groups: tuple[str, ...] = ("s",),
    check: Callable[[str], bool] | None = None,
    overlapping: bool = False,
) -> _Finder:
    """A finder yielding the span of the first participating group of ``groups`` per match.

    ``pattern`` is one case-sensitive pattern run on the text, or a pair from :func:`_rx_folded`
    run on the lowercased text (falling back to the IGNORECASE twin on the original text).
    Spans always index the original text, and ``check`` sees the original characters.

    ``overlapping`` resumes the search one character after each match start instead of after
    its end. It is for rules whose run swallows the start of a glued neighbour's prefix but
    stops at the prefix's separator ("ghp_<36>ghp_<36>": the first run ends at the second
    "_", which would leave the second token's body visible). Only safe when the run cannot
    contain the whole prefix, otherwise every position of a long run would rescan it.
    """

    def matches(subject: str, compiled: re.Pattern[str]) -> Iterator[re.Match[str]]:
        if not overlapping:
            yield from compiled.finditer(subject)
            return
        pos = 0
        while (match := compiled.search(subject, pos)) is not None:
            yield match
            pos = match.start() + 1

    def find(text: str, lowered: str | None) -> Iterator[_Span]:
        if isinstance(pattern, tuple):
            folded, ignorecase = pattern
            subject, compiled = (text, ignorecase) if lowered is None else (lowered, folded)
        else:
            subject, compiled = text, pattern
        for match in matches(subject, compiled):
            for group in groups:
                start, end = match.span(group)
                if start >= 0:
                    break
            else:
                continue
            end = _trim_end(text, start, end)
            if end <= start:
                continue
            if check is not None and not check(text[start:end]):
                continue
            yield start, end

    return find


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    # re.ASCII everywhere: \s, \b and IGNORECASE then mean exactly what the prefilter (ASCII
    # lowercase literals) assumes; under Unicode folding "ſ" would match "s" and the
    # prefilter could skip a rule the regex would have fired.
    return re.compile(pattern, flags | re.ASCII | re.VERBOSE)


def _rx_folded(pattern: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A case-insensitive rule written in lowercase: (for lowered text, IGNORECASE twin)."""
    return _rx(pattern), _rx(pattern, re.IGNORECASE)


# --- PEM private key blocks ------------------------------------------------------------------

# Anchored on the literal BEGIN with a fixed-width lookbehind for the dashes: a leading `-{2,}`
# would rescan a long run of dashes from every position.
_PEM_BEGIN_RE = _rx(r"(?:(?<=--)|(?<=--\x20))BEGIN[\x20A-Z0-9]{0,40}PRIVATE\x20KEY")
_PEM_END_RE = _rx(r"END[\x20A-Z0-9]{0,40}PRIVATE\x20KEY(?:\x20BLOCK)?\x20?-{0,16}")


def _find_pem(text: str, lowered: str | None) -> Iterator[_Span]:
    pos = 0
    while True:
        begin = _PEM_BEGIN_RE.search(text, pos)
        if begin is None:
            return
        start = begin.start()
        floor = max(0, start - 16)
        while start > floor and text[start - 1] in "- ":
            start -= 1
        while text[start] == " ":  # keep the space that separated the block from prose
            start += 1
        end = _PEM_END_RE.search(text, begin.end())
        if end is None:
            # Unterminated: everything after BEGIN may be key material.
            yield start, len(text)
            return
        yield start, end.end()
        pos = end.end()


# --- tokens recognised by their own shape ----------------------------------------------------

# Boundary used before short prefixes so that "risk-", "task-" or a base64 blob do not start a
# match in the middle of a word, and so a failing run is entered only once, at its start.
# Every boundary also treats "]" (left) and "[" (right) as word characters: once a neighbour
# has become [REDACTED], a second pass must see the same boundary the first pass saw, or
# redact(redact(x)) would differ from redact(x).
_B = r"(?<![A-Za-z0-9\]])"

_GITHUB_FINE_GRAINED_RE = _rx(r"(?P<s>github_pat_[A-Za-z0-9_]{22,})")
_GITHUB_RE = _rx(r"(?P<s>gh[pousr]_[A-Za-z0-9]{36,})")
_GITLAB_RE = _rx(_B + r"(?P<s>gl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|oas)-[A-Za-z0-9_-]{20,})")
_SLACK_RE = _rx(r"(?P<s>(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,})")
_SLACK_WEBHOOK_RE = _rx(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/+-]{20,})"
)
_STRIPE_RE = _rx(_B + r"(?P<s>(?:(?:sk|rk)_(?:live|test)|whsec)_[A-Za-z0-9]{20,})")
_ANTHROPIC_RE = _rx(r"(?P<s>sk-ant-[A-Za-z0-9_-]{20,})")
# sk-proj-..., sk-svcacct-..., sk-admin-... and the legacy sk-<48> all fit the one run.
_OPENAI_RE = _rx(_B + r"(?P<s>sk-(?!ant-)[A-Za-z0-9_-]{20,})")
_GOOGLE_RE = _rx(_B + r"(?P<s>AIza[A-Za-z0-9_-]{35,})")
_NPM_RE = _rx(_B + r"(?P<s>npm_[A-Za-z0-9]{36,})")
_PYPI_RE = _rx(_B + r"(?P<s>pypi-[A-Za-z0-9_-]{50,})")
_HUGGINGFACE_RE = _rx(_B + r"(?P<s>hf_[A-Za-z0-9]{30,})")
_SENDGRID_RE = _rx(_B + r"(?P<s>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_\[-])")
_AGE_RE = _rx(r"(?P<s>AGE-SECRET-KEY-1[0-9A-Z]{58})")
# Access key ids: AKIA (long-term), ASIA (STS temporary), ABIA (STS bearer), ACCA (context).
_AWS_KEY_ID_RE = _rx(r"(?<![A-Z0-9\]])(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?![A-Z0-9\[])")
_AWS_SECRET_RE = _rx_folded(
    r"""aws[_.-]?secret[_.-]?(?:access[_.-]?)?key (?:\\?["'`])? [\x20\t]{0,16}
        (?::=|=>|[:=]) [\x20\t]{0,16} (?:\\?["'`])?
        (?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=\[])"""
)
# header.payload.signature, or an unsigned header.payload (payload then starts eyJ too).
# Possessive runs plus the left boundary keep "eyJeyJeyJ..." linear.
_JWT_RE = _rx(
    r"""(?<![A-Za-z0-9_\]-])
        (?P<s>eyJ[A-Za-z0-9_-]{8,}+\.
          (?: eyJ[A-Za-z0-9_-]{4,}+ (?:\.[A-Za-z0-9_-]++)?
            | [A-Za-z0-9_-]{4,}+\.[A-Za-z0-9_-]{8,}+ ))"""
)

# --- secrets recognised by their context -----------------------------------------------------

# scheme://user:password@host. Starts at the literal "://"; the user part cannot contain ':'
# and the password cannot contain '/', so each attempt scans only up to the next "://".
# The password run backtracks to the last '@' of the authority ("p@ss" is common).
_URL_CREDENTIALS_RE = _rx(
    r"(?<=[A-Za-z0-9])://[^\s:/@?#]*+:(?P<s>[^\s/?#]+)@(?=[A-Za-z0-9]|\[[0-9A-Fa-f]*:)"
)

_AUTH_SCHEMES = r"bearer|token|bot|basic|apikey|api-key|key|digest|hmac|signature|aws4-hmac-sha256"
_AUTHORIZATION_RE = _rx_folded(
    rf"""authorization (?:\\?["'`])? [\x20\t]{{0,16}} [:=] [\x20\t]{{0,16}} (?:\\?["'`])?
      (?: (?:bearer|token|bot|basic|apikey|api-key|key) [\x20\t]{{1,16}}
            (?P<tok>[A-Za-z0-9._~+/=-]+)
        | (?:digest|hmac|signature|aws4-hmac-sha256) [\x20\t]{{1,16}} (?P<params>[^\n]+)
        | (?!(?:{_AUTH_SCHEMES})\b) (?P<raw>[^\s"'`,;()\[\]]{{8,}}) )"""
)
_BEARER_RE = _rx_folded(r"(?<![A-Za-z0-9_\]-])bearer[\x20\t]{1,16}(?P<s>[A-Za-z0-9._~+/-]{20,}=*)")


def _auth_value_ok(value: str) -> bool:
    return not _is_placeholder(value) and value.lower() not in _NOT_SECRET


def _bearer_ok(value: str) -> bool:
    # Standalone "Bearer <x>" in prose is common; real tokens practically always hold a digit.
    return _has_digit(value) and not _is_placeholder(value)


# --- key = value assignments -----------------------------------------------------------------

# Key names are matched by how they END, so DB_PASSWORD, client_secret, GITHUB_TOKEN, x-api-key
# and AccountKey all hit without listing prefixes; "passwordless", "tokens", "secretary" and
# "password_file" do not, because the separator must follow the keyword directly.
# Every alternative starts with a literal (words before "key" and "pass" are checked by
# fixed-width lookbehinds after the literal), so `re` can skip positions by their first
# character; a leading (api|private|...) group made this rule ten times slower on prose.
_SEPARATORS = ("", "_", "-", ".")
_KEY_HEADS = [
    word + sep
    for word in ("api", "private", "signing", "encryption", "master", "account", "secret")
    for sep in _SEPARATORS
] + ["secret" + a + "access" + b for a in _SEPARATORS for b in _SEPARATORS]
_KEYWORDS = rf"""
    pass(?: word | wd | phrase | (?<=storepass) | (?<=keypass) | (?<![a-z0-9\]]pass) )
  | pwd
  | secret
  | token
  | credentials?
  | key(?: {"|".join(f"(?<={re.escape(head)}key)" for head in _KEY_HEADS)} )
"""

# Python/TypeScript annotations between key and value ("password: str = ...") so the value
# after "=" is the one redacted, not the type name.
_ANNOTATION = r"""
    :[\x20\t]{0,8}
    (?:typing\.)?(?:str|string|bytes|secretstr|secretbytes|any
                   |optional\[(?:str|bytes|secretstr)\]|(?:str|bytes)\x20?\|\x20?none)
    [\x20\t]{0,8}=(?![=>])
"""

_ASSIGNMENT_RE, _ASSIGNMENT_RE_ICASE = _rx_folded(
    rf"""(?P<kw>{_KEYWORDS})
        (?: (?:\\?["'`])? [\x20\t]{{0,16}}
            (?: {_ANNOTATION} | :=  | =>  | =(?!=) | :(?![:=]) )
            [\x20\t]{{0,16}}
          | (?P<cli>[\x20\t]{{1,16}}) )"""
)

# Bodies of quoted values, possessive so a missing closing quote costs one scan of the line.
_QUOTED_BODY = {
    '"': re.compile(r'(?:[^"\\\n]|\\.)*+', re.ASCII),
    "'": re.compile(r"[^'\n]*+", re.ASCII),
    "`": re.compile(r"[^`\n]*+", re.ASCII),
}
# Body of a value quoted with escaped quotes, as in JSON embedded in a JSON string: \"...\".
_ESCAPED_QUOTED_BODY = re.compile(r'(?:[^"\\\n]|\\[^"\n])*+', re.ASCII)
# An unquoted value ends at whitespace, quotes, closing brackets, list/statement punctuation,
# '&' (query strings), '<' '>' '|' (shell), '\' (an escaped newline in JSON-encoded text) and
# at '(' '[' (a call or a subscript: code, not a literal).
_BARE_VALUE = re.compile(r"[^\s\"'`,;(){}\[\]<>&|\\]++", re.ASCII)

# Unquoted words that are types, nulls or booleans in code and config, not secrets.
_NOT_SECRET = frozenset(
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
    }
)


def _key_start(text: str, keyword_start: int) -> int:
    """Start of the key word that ends with the keyword (DB_PASSWORD, --api-key, x-token)."""
    i = keyword_start
    floor = max(0, keyword_start - 64)  # bounded: keys are short, hostile runs are not
    while i > floor and (text[i - 1].isalnum() or text[i - 1] in "_-."):
        i -= 1
    return i


def _is_cli_option(text: str, keyword_start: int) -> bool:
    """True when the keyword ends an option word such as --password or -storepass.

    The option must start a word: after whitespace, a quote, "(" or "=", or at the start.
    Anything else before the dash ("x]-token", a run longer than a key) means this is not a
    command line, and keeps the answer the same once a neighbour has become [REDACTED].
    """
    start = _key_start(text, keyword_start)
    return text[start] == "-" and (start == 0 or text[start - 1] in " \t\n\"'`(=")


def _match_end(pattern: re.Pattern[str], text: str, start: int) -> int:
    match = pattern.match(text, start)
    return start if match is None else match.end()


def _value_span(text: str, p: int) -> tuple[int, int, bool] | None:
    """Span of the value starting at ``p`` and whether it was quoted; None if there is none."""
    n = len(text)
    if p >= n:
        return None
    c = text[p]
    if c in _QUOTE_CHARS:
        start = p + 1
        end = _match_end(_QUOTED_BODY[c], text, start)
        # An unterminated quote runs to the end of the line: redacting too much is safe.
        return (start, end, True) if end > start else None
    if c == "\\" and p + 1 < n and text[p + 1] in "\"'":
        start = p + 2
        end = _match_end(_ESCAPED_QUOTED_BODY, text, start)
        return (start, end, True) if end > start else None
    match = _BARE_VALUE.match(text, p)
    if match is None:
        return None
    end = _trim_end(text, p, match.end())
    return (p, end, False) if end > p else None


def _find_assignments(text: str, lowered: str | None) -> Iterator[_Span]:
    pos = 0
    n = len(text)
    has_url = "://" in text  # spares the backwards key scan below on most texts
    if lowered is None:
        subject, search = text, _ASSIGNMENT_RE_ICASE.search
    else:
        subject, search = lowered, _ASSIGNMENT_RE.search
    while True:
        match = search(subject, pos)
        if match is None:
            return
        pos = match.end()
        cli = match.group("cli") is not None
        if cli and not _is_cli_option(text, match.start()):
            continue
        if has_url and text.endswith("://", 0, _key_start(text, match.start())):
            continue  # https://x-access-token:...@host is URL userinfo: url_credentials owns it
        found = _value_span(text, match.end())
        if found is None:
            continue
        start, end, quoted = found
        # Resume after the value whether or not it is kept: rescanning a long value from every
        # keyword inside it would be quadratic.
        pos = max(pos, end)
        value = text[start:end]
        if value.startswith(REDACTED) or _is_placeholder(value):
            continue
        if _PLACEHOLDER_OPEN_RE.match(text, start) is not None:
            continue
        if value.lower() in _NOT_SECRET or not value.strip("*"):
            continue
        if cli and value.startswith("-"):
            continue  # "--password --other-flag": the option has no value here
        if match.group("kw").lower() == "pwd" and value[0] in "/~":
            continue  # PWD=/home/me is the working directory, not an ODBC password
        if not quoted and end < n and text[end] in "([":
            continue  # get_password() or environ["X"]: code, not a literal
        yield start, end


# --- the table -------------------------------------------------------------------------------

# Order matters only for naming: within one merged span, specific rules are reported before
# context rules, and earlier rules before later ones.
RULES: tuple[Rule, ...] = (
    Rule("private_key_block", ("begin",), _find_pem),
    Rule("github_fine_grained_token", ("github_pat_",), _regex_finder(_GITHUB_FINE_GRAINED_RE)),
    Rule(
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        _regex_finder(_GITHUB_RE, overlapping=True),
    ),
    Rule("gitlab_token", ("gl",), _regex_finder(_GITLAB_RE)),
    Rule("slack_token", ("xox", "xapp-"), _regex_finder(_SLACK_RE)),
    Rule("slack_webhook_url", ("hooks.slack.com",), _regex_finder(_SLACK_WEBHOOK_RE)),
    Rule(
        "stripe_key",
        ("_live_", "_test_", "whsec_"),
        _regex_finder(_STRIPE_RE, overlapping=True),
    ),
    Rule("anthropic_api_key", ("sk-ant-",), _regex_finder(_ANTHROPIC_RE)),
    Rule("openai_api_key", ("sk-",), _regex_finder(_OPENAI_RE, check=_looks_random)),
    Rule("google_api_key", ("aiza",), _regex_finder(_GOOGLE_RE)),
    Rule("npm_token", ("npm_",), _regex_finder(_NPM_RE, overlapping=True)),
    Rule("pypi_token", ("pypi-",), _regex_finder(_PYPI_RE, check=_looks_random)),
    Rule(
        "huggingface_token",
        ("hf_",),
        _regex_finder(_HUGGINGFACE_RE, check=_looks_random, overlapping=True),
    ),
    Rule("sendgrid_api_key", ("sg.",), _regex_finder(_SENDGRID_RE)),
    Rule("age_secret_key", ("age-secret-key-1",), _regex_finder(_AGE_RE)),
    Rule("aws_access_key_id", ("akia", "asia", "abia", "acca"), _regex_finder(_AWS_KEY_ID_RE)),
    Rule("aws_secret_access_key", ("aws",), _regex_finder(_AWS_SECRET_RE)),
    Rule("jwt", ("eyj",), _regex_finder(_JWT_RE)),
    Rule("url_credentials", ("://",), _regex_finder(_URL_CREDENTIALS_RE), specific=False),
    Rule(
        "authorization_header",
        ("authorization",),
        _regex_finder(_AUTHORIZATION_RE, ("tok", "params", "raw"), _auth_value_ok),
        specific=False,
    ),
    Rule("bearer_token", ("bearer",), _regex_finder(_BEARER_RE, check=_bearer_ok), False),
    Rule(
        "secret_assignment",
        ("pass", "pwd", "secret", "token", "key", "credential"),
        _find_assignments,
        specific=False,
    ),
)

RULE_NAMES: tuple[str, ...] = tuple(rule.name for rule in RULES)
