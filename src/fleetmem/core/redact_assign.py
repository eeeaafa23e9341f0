"""Secrets in key = value assignments: .env, YAML, TOML, INI, JSON, properties, CLI options.

Two rules share one value reader:

* ``secret_assignment``: the key *ends* with a word that only names secrets (DB_PASSWORD,
  client_secret, GITHUB_TOKEN, x-api-key, AccountKey, --password, -storepass). Any value that
  is not a placeholder, a null or code is replaced.
* ``high_entropy_assignment``: the key merely *contains* a secret-ish word anywhere (``*key*``,
  ``*token*``, ``*secret*``, ``*auth*``, ``*pass*``, ``*pw*``, ``*cred*``, ``*sig*``,
  ``*session*``, ``*cookie*``, ``*salt*``): the value is replaced only when it looks random
  (long, mixed, no words), so ``cache_key = "user:%s"`` stays readable.

A YAML block scalar (``password: |`` with the value on the indented lines below) is read to
the end of its indentation; TOML triple quotes to their close; an unquoted value on a config
line (``KEY=`` or ``key:`` opening the line) runs to the end of the line or a comment.
"""

from __future__ import annotations

import re

from fleetmem.core.redact_base import (
    PLACEHOLDER_OPEN_RE,
    PLACEHOLDER_START,
    QUOTE_CHARS,
    RANDOM_VALUE_MIN,
    REDACTED,
    Rule,
    is_placeholder,
    random_value,
    rx,
    rx_folded,
    trim_end,
)
from fleetmem.core.redact_context import NOT_SECRET

# Key names are matched by how they END, so DB_PASSWORD, client_secret, GITHUB_TOKEN, x-api-key
# and AccountKey all hit without listing prefixes; "passwordless", "tokens", "secretary" and
# "password_file" do not, because the separator must follow the keyword directly.
# Every alternative starts with a literal (words before "key" and "pass" are checked by
# fixed-width lookbehinds after the literal), so `re` can skip positions by their first
# character; a leading (api|private|...) group made this rule ten times slower on prose.
_SEPARATORS = ("", "_", "-", ".")
_KEY_HEADS = [
    word + sep
    for word in (
        "api",
        "private",
        "signing",
        "encryption",
        "master",
        "account",
        "secret",
        "access",
        "auth",
        "shared",
        "storage",
        "primary",
        "secondary",
        "subscription",
        "consumer",
        "license",
    )
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
_OPERATOR = rf"""
    (?:\\?["'`])? [\x20\t]{{0,16}}
    (?: {_ANNOTATION} | :=  | =>  | =(?!=) | :(?![:=]) )
    [\x20\t]{{0,16}}"""

# The characters of an unquoted value (see _BARE_VALUE). The key pattern reads a bare value
# itself, so the common `key=value` needs no second match to find where the value ends.
_BARE_CLASS = r"[^\s\"'`,;(){}\[\]<>&|\\]"
# Placeholders, masks and an earlier [REDACTED] all start with one of these.
_PLACEHOLDER_FIRST = PLACEHOLDER_START + "["
# Characters of a key word: DB_PASSWORD, --api-key, spring.datasource.password.
_KEY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-."


def _behind(words: list[str]) -> str:
    return "|".join(f"(?<={re.escape(word)})" for word in words)


# Dispatched on the key's last character (and for "key" on the one before it), since a run of
# eighty lookbehinds tried in turn at every keyword cost more than the Python they spare.
_HEAD_KEYS = {sep: [head + "key" for head in _KEY_HEADS if head.endswith(sep)] for sep in "_-."}
_HEAD_KEYS[""] = [head + "key" for head in _KEY_HEADS if head[-1].isalpha()]
_STRONG_BEHIND = rf"""
    (?<=d)(?:{_behind(["password", "passwd", "pwd"])})
  | (?<=e)(?<=passphrase)
  | (?<=s)(?:{_behind(["storepass", "keypass", "credentials"])} | (?<=pass)(?<![a-z0-9]pass))
  | (?<=t)(?<=secret)
  | (?<=n)(?<=token)
  | (?<=l)(?<=credential)
  | (?<=key)(?: (?<=_key)(?:{_behind(_HEAD_KEYS["_"])})
              | (?<=-key)(?:{_behind(_HEAD_KEYS["-"])})
              | (?<=\.key)(?:{_behind(_HEAD_KEYS["."])})
              | (?<=[a-z]key)(?:{_behind(_HEAD_KEYS[""])}) )
"""
# The rest of a config line that continues an unquoted value: plain words, no code (see
# _extend_config_value).
# Possessive: the lookahead needs a line end or a comment right after a word, so giving back
# part of a word (or a whole one) can never help, and without it a failing tail backtracked
# through every character of its last word.
_LINE_TAIL_PATTERN = (
    r"(?:[\x20\t]+[^\s\"'`,;(){}\[\]<>|\\=\x23]++)++(?=[\x20\t]*(?:\n|\Z|[\x20\t]\x23))"
)
# A bare value too short to be random that no line tail can continue.
_SHORT_BARE = (
    rf"{_BARE_CLASS}{{1,{RANDOM_VALUE_MIN - 1}}}+(?!{_BARE_CLASS})(?!{_LINE_TAIL_PATTERN})"
)
# A secret-ish word anywhere in a key, the rest of the key, then an operator, or blanks after
# a command-line option. Whether the key names a secret (strong) is decided on the whole key.
#
# The pattern also turns down, in C, the two verdicts that need nothing but the key and the
# value's length, so a dense text of `pw=a` never reaches the Python loop: a weak key given
# as a command-line option, and a weak key whose bare value is too short to be random and
# that no config-line tail continues. Whether the key is strong is read at its end by the
# lookbehinds of _STRONG_BEHIND, the same endings as _KEYWORDS; the groups around it are
# atomic so a refusal cannot be retried another way.
_ANY_KEY_RE, _ANY_KEY_RE_ICASE = rx_folded(
    rf"""(?P<kw>key|token|secret|auth|pass|pw|cred|sig|session|cookie|salt)
        (?P<rest>[a-z0-9_.-]{{0,32}}+)
        (?>(?P<strong>{_STRONG_BEHIND})?)
        (?> {_OPERATOR} | (?P<cli>[\x20\t]{{1,16}}) )
        (?(strong)|(?(cli)(?!)|(?!{_SHORT_BARE})))
        (?: (?P<bare>{_BARE_CLASS}++) (?=(?P<tail>{_LINE_TAIL_PATTERN}))? )?"""
)
_STRONG_END = rx(rf"(?:{_KEYWORDS})\Z")

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
_BARE_VALUE = re.compile(_BARE_CLASS + "++", re.ASCII)
# A YAML block scalar indicator ending its line: "|", ">-", "|+2", optionally a comment.
_BLOCK_INDICATOR = re.compile(r"[|>][+-]?[0-9]?[+-]?[\x20\t]*(?:\x23[^\n]*)?(?=\n)", re.ASCII)
# What may precede a key that opens a config line: indentation, "export ", a YAML list dash.
_LINE_LEAD = re.compile(r"[\x20\t]*(?:export[\x20\t]+|-[\x20\t]+)?\Z", re.ASCII)
_LINE_TAIL = re.compile(_LINE_TAIL_PATTERN, re.ASCII)
# A value up to this long that the weak rule turned down is searched again for keys.
_RESCAN_LIMIT = 256
# Bounds the backwards search for the start of a key's line (a hostile line has no start).
_MAX_LEAD = 256
_CODE_WORDS = frozenset({"if", "else", "and", "or", "not", "in", "is", "for", "lambda", "return"})
# A dotted name (self.password, settings.DB_TOKEN) or a bare identifier that repeats the key
# (password=password): code that passes a secret along, not a literal.
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\Z", re.ASCII)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z", re.ASCII)
# CamelCase words, no digits: a type name after "key:" in an annotation.
_TYPE_NAME = re.compile(r"(?:[A-Z][a-z]+){2,}\Z", re.ASCII)


_KEY_CHAR_SET = frozenset(_KEY_CHARS)
# What may stand before the dash of a command-line option: a word boundary of a command line.
_OPTION_LEAD = " \t\n\"'`(="


def _key_start(text: str, keyword_start: int) -> int:
    """Start of the key word that ends with the keyword (DB_PASSWORD, --api-key, x-token)."""
    if keyword_start == 0 or text[keyword_start - 1] not in _KEY_CHAR_SET:
        return keyword_start  # the keyword starts the key: the common case, spared a slice
    floor = max(0, keyword_start - 64)  # bounded: keys are short, hostile runs are not
    before = text[floor:keyword_start]
    return keyword_start - (len(before) - len(before.rstrip(_KEY_CHARS)))


def _is_cli_option(text: str, keyword_start: int) -> bool:
    """True when the keyword ends an option word such as --password or -storepass.

    The option must start a word: after whitespace, a quote, "(" or "=", or at the start.
    Anything else before the dash ("x]-token", a run longer than a key) means this is not a
    command line, and keeps the answer the same once a neighbour has become [REDACTED].
    """
    start = _key_start(text, keyword_start)
    return text[start] == "-" and (start == 0 or text[start - 1] in _OPTION_LEAD)


def _match_end(pattern: re.Pattern[str], text: str, start: int) -> int:
    match = pattern.match(text, start)
    return start if match is None else match.end()


def _block_scalar(text: str, key_start: int, p: int) -> tuple[int, int] | None:
    """Span of the indented lines of a YAML block scalar whose indicator is at ``p``."""
    indicator = _BLOCK_INDICATOR.match(text, p)
    if indicator is None:
        return None
    line_start = _line_start(text, key_start)
    if line_start < 0:
        return None
    column = key_start - line_start
    pos = indicator.end() + 1
    first = last = -1
    n = len(text)
    while pos < n:
        line_end = text.find("\n", pos)
        if line_end < 0:
            line_end = n
        line = text[pos:line_end]
        content = line.lstrip(" \t")
        if content:
            if len(line) - len(content) <= column:
                break
            if first < 0:
                first = pos + len(line) - len(content)
            last = line_end
        pos = line_end + 1
    return (first, last) if first >= 0 else None


def _value_span(text: str, key_start: int, p: int) -> tuple[int, int, bool] | None:
    """Span of the value starting at ``p`` and whether it was quoted; None if there is none."""
    n = len(text)
    if p >= n:
        return None
    c = text[p]
    if c in "|>":
        block = _block_scalar(text, key_start, p)
        return None if block is None else (*block, True)
    if c in "\"'" and text.startswith(c * 3, p):
        close = text.find(c * 3, p + 3)
        end = n if close < 0 else close
        return (p + 3, end, True) if end > p + 3 else None
    if c in QUOTE_CHARS:
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
    end = match.end()
    if end < n and text[end] in " \t":
        end = _extend_config_value(text, key_start, end)
    if text[end - 1] == ".":
        end = trim_end(text, p, end)
    return (p, end, False) if end > p else None


def _line_start(text: str, pos: int) -> int:
    """Start of the line holding ``pos``, or -1 when it is more than a key's length away."""
    floor = max(0, pos - _MAX_LEAD)
    newline = text.rfind("\n", floor, pos)
    if newline >= 0:
        return newline + 1
    return 0 if floor == 0 else -1


def _line_lead(text: str, key_start: int) -> bool:
    """True when only indentation, "export " or a list dash precede the key on its line."""
    start = _line_start(text, key_start)
    return start >= 0 and _LINE_LEAD.match(text, start, key_start) is not None


def _extend_config_value(text: str, key_start: int, end: int) -> int:
    """On a config line (the key opens it), an unquoted value's words run to the line's end."""
    tail = _LINE_TAIL.match(text, end)
    if tail is not None and _config_tail(text, key_start, end, tail.end()):
        return tail.end()
    return end


def _config_tail(text: str, key_start: int, end: int, tail_end: int) -> bool:
    """True when the words from ``end`` to ``tail_end`` continue the value: no code words,
    and the key opens its line."""
    return not _CODE_WORDS.intersection(text[end:tail_end].split()) and _line_lead(text, key_start)


def _assignments(text: str, lowered: str | None) -> list[tuple[int, int, str, bool]]:
    """One pass over every key = value: strong keys' values, and random values of weak keys.

    This loop runs once per assignment, and a dense hostile text holds ten thousand of them in
    64 KB, so it is written for that case: the key pattern has already read a bare value and
    the line tail after it, and has turned down in C the weak keys whose value is too short
    to be random; groups are read by number; and the verdict on a (key, operator, value, next
    character) seen before is looked up rather than worked out again (hostile text repeats
    one assignment).
    """
    found: list[tuple[int, int, str, bool]] = []  # (start, end, rule, specific)
    pos = 0
    has_url = "://" in text  # spares the backwards key scan below on most texts
    keys: dict[str, tuple[bool, str, int]] = {}  # key -> (strong, name, len(name))
    verdicts: dict[str | tuple[str, str, str, bool, bool], str | None] = {}
    if lowered is None:
        subject, search = text, _ANY_KEY_RE_ICASE.search
    else:
        subject, search = lowered, _ANY_KEY_RE.search
    while (match := search(subject, pos)) is not None:
        keyword_start, operator_end = match.span()
        rest_end = match.end(_REST)
        bare_start, bare_end = match.span(_BARE)
        cli = match.start(_CLI) >= 0
        if bare_start >= 0:
            operator_end = bare_start
        pos = operator_end
        if keyword_start and text[keyword_start - 1] in _KEY_CHAR_SET:
            key_start = _key_start(text, keyword_start)
        else:
            key_start = keyword_start  # the keyword starts the key: the common case
        if cli and not (
            text[key_start] == "-" and (key_start == 0 or text[key_start - 1] in _OPTION_LEAD)
        ):
            continue  # not an option word: see _is_cli_option
        # The lowered text is aligned with the text, so its slice is the key's lower case.
        key = text[key_start:rest_end].lower() if lowered is None else subject[key_start:rest_end]
        known = keys.get(key)
        if known is None:  # keys repeat within a text; the regex runs once per distinct key
            # The name a variable holding this secret would end with (see below).
            name = key.rpartition(".")[2].lstrip("-")
            known = keys[key] = (_STRONG_END.search(key) is not None, name, len(name))
        strong = known[0]
        if cli and not strong:
            continue
        if has_url and text.endswith("://", 0, key_start):
            continue  # https://x-access-token:...@host is URL userinfo: url_credentials owns it
        if bare_start >= 0:  # what _value_span's unquoted branch would find, without a call
            start, end, quoted = bare_start, bare_end, False
            tail_end = match.end(_TAIL)  # the line tail the pattern read after the value
            if tail_end >= 0 and _config_tail(text, key_start, end, tail_end):
                end = tail_end
            if text[end - 1] == ".":
                end = trim_end(text, start, end)
                if end <= start:
                    continue
        else:
            span = _value_span(text, key_start, operator_end)
            if span is None:
                continue
            start, end, quoted = span
        # Resume after the value whether or not it is kept: rescanning a long value from every
        # keyword inside it would be quadratic. A short value under a weak key is searched
        # again, since it may hold the real key ("Cookie: auth_session=...").
        if (strong or end - start > _RESCAN_LIMIT) and end > pos:
            pos = end
        if not strong and end - start < RANDOM_VALUE_MIN:
            continue  # random_value turns it down whatever the checks below say
        # Everything _verdict reads, so an assignment seen before costs one lookup. An unquoted
        # value follows its operator, so the text from the key to the character after the
        # value holds it all (the pattern parses the same characters the same way).
        operator = subject[rest_end:operator_end]
        seen = (
            text[key_start : end + 1]
            if bare_start >= 0
            else (key, operator, text[start : end + 1], quoted, cli)
        )
        rule = verdicts.get(seen, _UNSEEN)
        if rule is _UNSEEN:
            rule = verdicts[seen] = _verdict(text, start, end, quoted, cli, key, operator, known)
        if rule is not None:
            found.append((start, end, rule, False))
    return found


_UNSEEN = ""
# Groups by name: reading their numbers here would compile the pattern at import, which the
# prefilter spares most processes (see LazyPattern).
_REST, _BARE, _CLI, _TAIL = "rest", "bare", "cli", "tail"


def _verdict(
    text: str,
    start: int,
    end: int,
    quoted: bool,
    cli: bool,
    key: str,
    operator: str,
    known: tuple[bool, str, int],
) -> str | None:
    """The rule that redacts this value, or None when it is a placeholder, a null or code."""
    strong, name, name_length = known
    value = text[start:end]
    after = text[end : end + 1]
    # Placeholders and masks all start with one of these: a cheap test before the regexes.
    if value[0] in _PLACEHOLDER_FIRST and (
        value.startswith(REDACTED)
        or is_placeholder(value)
        or PLACEHOLDER_OPEN_RE.match(text, start) is not None
    ):
        return None
    if value.lower() in NOT_SECRET or not value.strip("*"):
        return None
    if cli and value[0] == "-":
        return None  # "--password --other-flag": the option has no value here
    if value[0] in "/~" and key.endswith("pwd"):
        return None  # PWD=/home/me is the working directory, not an ODBC password
    if not quoted:  # an unquoted value may be code (a call, a name, a type), not a literal
        if after in ("(", "["):
            return None  # get_password() or environ["X"]
        if "." in value and _DOTTED_NAME.match(value):
            return None  # self.password, settings.API_TOKEN
        if (
            value[0].isupper()
            and _TYPE_NAME.match(value)
            and ":" in operator
            and "=" not in operator
        ):
            return None  # private_key: RSAPrivateKey, a type annotation
        if (
            len(value) >= name_length
            and value.lower().endswith(name)
            and _IDENTIFIER.match(value) is not None
        ):
            return None  # password=password, token=auth_token: a variable handed on
    if strong:
        return STRONG_RULE
    return WEAK_RULE if random_value(value) else None


#: The names the assignment pass reports: a value under a key that names a secret, and a
#: random-looking value under a key that merely mentions one.
STRONG_RULE = "secret_assignment"
WEAK_RULE = "high_entropy_assignment"

_WEAK_WORDS = (
    "key",
    "token",
    "secret",
    "auth",
    "pass",
    "pw",
    "cred",
    "sig",
    "session",
    "cookie",
    "salt",
)

ASSIGNMENT_RULES: tuple[Rule, ...] = (
    Rule(
        STRONG_RULE,
        _WEAK_WORDS,
        labelled=_assignments,
        specific=False,
    ),
)
