"""Targeted tests of the redactor's newer forms: what must be caught, what must be kept.

The generated corpus (test_redact_corpus.py) measures rates; these pin down behaviour at the
edges: which placeholders stay, what a config line or a YAML block scalar covers, how an
encoded run is replaced, and that code which merely names a secret is left alone.
"""

from __future__ import annotations

import base64
import math
import random
import re
import string
import urllib.parse
from collections import Counter

import pytest

from fleetmem.core.redact import REDACTED, find_secrets, redact
from fleetmem.core.redact_assign import (
    _ANY_KEY_RE,
    _ANY_KEY_RE_ICASE,
    _KEY_HEADS,
    _LINE_TAIL,
    _STRONG_END,
    _assignments,
    _key_start,
    _value_span,
)
from fleetmem.core.redact_base import PLACEHOLDER_START, is_placeholder, shannon_bits, trim_end
from fleetmem.core.redact_rules import RULE_NAMES
from tests.core.secret_corpus import ALNUM, B64URL, HEX, rand


@pytest.mark.parametrize(
    "text",
    [
        "password=${DB_PASSWORD}",
        "API_KEY=<your-api-key>",
        "token: xxxxxxxxxxxx",
        "secret=********",
        "password: ...",
        "self.password = password",
        "api_key = self._api_key",
        "token = auth_token",
        "private_key: CertificateIssuerPrivateKeyTypes,",
        "password: bool = False,",
        "cache_key = 'user:profile:v2'",
        "session_key = build_key(user)",
        "signature_algorithm = 'RSASSA_PSS_SHA_256'",
        "password_file=/run/secrets/db",
        "auth_url: https://login.example.com/oauth2/authorize",
        "if token is None: raise ValueError('token missing')",
        "echo aGVsbG8gd29ybGQsIHRoaXMgaXMgcGxhaW4gdGV4dA== | base64 -d",
        "see https://example.com/a%20b%2Fc?q=%7Bx%7D",
        "the user logged in with their password and a login token",
    ],
)
def test_left_alone(text: str) -> None:
    assert redact(text) == text, find_secrets(text)


def test_yaml_block_scalar_covers_the_indented_lines_only() -> None:
    one, two = rand(16), rand(20)
    text = f"smtp:\n  password: |-\n    {one}\n    {two}\n  port: 587\n"
    out = redact(text)
    assert one not in out and two not in out
    assert out.endswith("  port: 587\n")
    assert "password: |-" in out


def test_config_line_value_runs_to_a_comment() -> None:
    assert redact("password = two words  # rotated") == f"password = {REDACTED}  # rotated"
    # In code the value is one token: "or" makes the rest of the line code.
    assert redact("password = a or b") == f"password = {REDACTED} or b"


@pytest.mark.parametrize(
    ("template", "name"),
    [
        ("curl -u bob:{v} https://x.example", "command_line_credentials"),
        ("mysql -h db -u root -p{v} shop", "mysql_password_option"),
        ("sshpass -p '{v}' ssh host", "sshpass_password"),
        ("machine h.example login bob password {v}", "netrc_password"),
        ("<password>{v}</password>", "xml_secret_element"),
    ],
)
def test_command_line_and_file_forms(template: str, name: str) -> None:
    value = rand(14)
    text = template.format(v=value)
    assert value not in redact(text)
    assert name in find_secrets(text)


def test_base64_run_with_a_secret_inside_is_replaced_whole() -> None:
    token = "ghp_" + rand(36)
    encoded = base64.b64encode(f"GITHUB_TOKEN={token}\n".encode()).decode()
    text = f"echo {encoded} | base64 -d"
    assert redact(text) == f"echo {REDACTED} | base64 -d"
    assert find_secrets(text) == ["base64_encoded_secret"]


def test_wrapped_base64_block_is_decoded_whole() -> None:
    token = "sk-ant-api03-" + rand(90, B64URL)
    encoded = base64.encodebytes(f"ANTHROPIC_API_KEY={token}\n".encode()).decode()
    assert "\n" in encoded.strip()
    out = redact(f"data: |\n{encoded}")
    assert not any(line and line in out for line in encoded.splitlines())


def test_url_and_json_escapes_are_decoded() -> None:
    token = "xoxb-" + rand(12, "0123456789") + "-" + rand(24)
    for encoded in (
        urllib.parse.quote(token, safe=""),
        "".join(f"\\u{ord(c):04x}" for c in token),
        "".join(f"&#{ord(c)};" for c in token),
    ):
        out = redact(f"payload {encoded} end")
        assert out == f"payload {REDACTED} end", encoded
        assert find_secrets(f"payload {encoded} end") == ["slack_token"]


def test_split_token_is_joined() -> None:
    token = "npm_" + rand(36)
    for text in (
        f'TOKEN="{token[:12]}\\\n{token[12:]}"',
        f'auth = ("{token[:12]}"\n        "{token[12:]}")',
        f"auth = '{token[:12]}' + '{token[12:]}'",
    ):
        out = redact(text)
        assert token[:12] not in out and token[12:] not in out, text


def test_weak_key_needs_a_random_value() -> None:
    value = rand(32, ALNUM)
    assert redact(f"webhook_signing_material: {value}") == f"webhook_signing_material: {REDACTED}"
    assert find_secrets(f"x_session_id={rand(40, HEX)}") == ["high_entropy_assignment"]
    assert redact("webhook_signing_material: rotate_every_ninety_days") == (
        "webhook_signing_material: rotate_every_ninety_days"
    )


def test_every_reported_name_is_a_rule_name() -> None:
    texts = [
        f"x={base64.b64encode(('password=' + rand(12)).encode()).decode()}",
        f"session_token_v2: {rand(40)}",
        f"dop_v1_{rand(64, HEX)}",
    ]
    for text in texts:
        assert find_secrets(text), text
        assert all(name in RULE_NAMES for name in find_secrets(text))


# --- the shortcuts that keep dense hostile text fast say what the long way says ------------


def _textbook_bits(value: str) -> float:
    total = len(value)
    return -sum(c / total * math.log2(c / total) for c in Counter(value).values())


def test_entropy_shortcut_equals_the_textbook_sum(rng: random.Random) -> None:
    alphabets = (ALNUM, HEX, "ab", "aaaaab", string.printable)
    for _ in range(2000):
        value = "".join(rng.choice(rng.choice(alphabets)) for _ in range(rng.randint(1, 80)))
        assert shannon_bits(value) == pytest.approx(_textbook_bits(value), abs=1e-9), value


def test_every_placeholder_starts_with_a_listed_character(rng: random.Random) -> None:
    pieces = ("$", "{", "}", "(", ")", "<", ">", "%", "x", "X", "*", ".", "#", "_", "-", "a", "Z")
    pieces += ("9", " ", "\u2026", "${", "{{", "<%", "%(")
    caught = 0
    for _ in range(20000):
        value = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        if is_placeholder(value):
            caught += 1
            assert value[0] in PLACEHOLDER_START, value
    assert caught > 500  # the draw really exercised the placeholder forms


def test_a_config_line_tail_reads_as_the_backtracking_pattern_did(rng: random.Random) -> None:
    backtracking = re.compile(
        r"(?:[\x20\t]+[^\s\"'`,;(){}\[\]<>|\\=\x23]+)+(?=[\x20\t]*(?:\n|\Z|[\x20\t]\x23))",
        re.ASCII,
    )
    parts = ("a", "word", " ", "  ", "\t", "=", "#", " #", "\n", '"', "(", "x=y", "9")
    for _ in range(5000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 16)))
        for start in range(len(text)):
            old = backtracking.match(text, start)
            new = _LINE_TAIL.match(text, start)
            assert (old and old.span()) == (new and new.span()), (text, start)


def test_inline_bare_value_is_the_value_span_reads(rng: random.Random) -> None:
    """The key pattern reads an unquoted value itself so the common case needs no second
    match; it must find exactly what _value_span's own reading finds, on every kind of value
    (quoted, block, code, placeholder, empty) and on lowered text as on the original."""
    keys = ["password", "pwd", "pw", "api_key", "x-token", "--password", "Session.Key", "K"]
    operators = ["=", " = ", ":", ": ", ":=", "=>", " ", '": "', ": str = ", "==", "::"]
    values = ['"q"', "'q'", "`q`", '"""q"""', "|\n  q", ">-\n  q", '\\"q\\"', "(", "[x]", ""]
    leads = ["\n", " ", "export ", "- ", ";", "https://", "İ", "ΑΣ"]
    checked = 0
    for _ in range(6000):
        word = "".join(rng.choices(ALNUM + ".-/$<>{}*", k=rng.randint(1, 24)))
        value = rng.choice([*values, word])
        tail = rng.choice(["", " ", " more words", " # c", "\n", ".", ", x"])
        text = rng.choice(leads) + rng.choice(keys) + rng.choice(operators) + value + tail
        lowered = text.lower()
        for subject, pattern in ((lowered, _ANY_KEY_RE), (text, _ANY_KEY_RE_ICASE)):
            if subject is lowered and len(lowered) != len(text):
                continue
            pos = 0
            while (match := pattern.search(subject, pos)) is not None:
                bare_start, bare_end = match.span("bare")
                operator_end = match.end() if bare_start < 0 else bare_start
                pos = operator_end
                key_start = match.start()
                found = _value_span(text, key_start, operator_end)
                if bare_start < 0:
                    # No bare value read: _value_span finds a quoted or block value, or none.
                    assert found is None or found[2] or found[0] > operator_end, (text, found)
                    continue
                checked += 1
                if found is None:  # a value of trailing dots only, trimmed away
                    assert trim_end(text, bare_start, bare_end) == bare_start, text
                    continue
                assert not found[2], (text, found)
                assert found[0] == bare_start, (text, found, bare_start)
                # Only a trailing dot is trimmed, and only the config-line reading goes on.
                assert found[1] <= bare_end or text[bare_end] in " \t", (text, found, bare_end)
    assert checked > 600  # about 1,100: the test has something to check


def test_the_patterns_strong_lookbehinds_agree_with_the_key_endings(rng: random.Random) -> None:
    """The key pattern decides in C whether a key is strong (to turn weak keys' short values
    down without a Python step); it must agree with _STRONG_END, which decides it on the
    key's own text, for every key: built from the real endings, heads, separators, near
    misses and random key characters, in any case."""
    words = ["pass", "password", "passwd", "passphrase", "storepass", "keypass", "pwd", "pw"]
    words += ["secret", "token", "credential", "credentials", "key", "auth", "sig", "salt"]
    words += ["session", "cookie", "cred", "tokens", "secretary", "passw", "keys", "bypass"]
    pieces = [*words, *_KEY_HEADS, "_", "-", ".", "x", "my", "db", "9", "a1"]
    checked = strong = 0
    for _ in range(4000):
        key = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))
        if rng.random() < 0.2:
            key = "".join(rng.choice((c, c.upper())) for c in key)
        text = rng.choice(["", " ", "]", "--", "x.", "(", "://"]) + key + rng.choice(["=", ": "])
        lowered = text.lower()
        for subject, pattern in ((lowered, _ANY_KEY_RE), (text, _ANY_KEY_RE_ICASE)):
            pos = 0
            while (match := pattern.search(subject, pos)) is not None:
                pos = match.start() + 1  # every keyword, the ones inside a key too
                key_start = _key_start(text, match.start())
                expected = _STRONG_END.search(lowered[key_start : match.end("rest")]) is not None
                assert (match.start("strong") >= 0) == expected, (text, match.group())
                checked += 1
                strong += expected
    assert checked > 3000 and 0 < strong < checked  # both verdicts were exercised


@pytest.mark.parametrize(
    ("unit", "kept"),
    [
        ("pw=a ", True),  # weak, short: refused by the pattern itself
        ("pw=a\n", True),
        ("--sig a ", True),  # a weak key as an option: refused by the pattern itself
        ("pwd=a ", False),  # strong: every value goes
        ("token=x\n", False),
        ("pw=Zq8vR2mK9tLw4XnB ", False),  # weak, but long and random
    ],
)
def test_dense_assignments_get_the_verdict_of_a_single_one(unit: str, kept: bool) -> None:
    """The pattern's refusals and the verdict memo change how fast a dense text is read,
    never what is redacted: each copy of the unit is treated as the unit alone is."""
    alone = redact(unit)
    assert (alone == unit) is kept
    dense = unit * 2000
    assert redact(dense) == alone * 2000
    assert len(_assignments(dense, dense.lower())) == (0 if kept else 2000)
