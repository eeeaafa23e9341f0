"""Tests of the one redactor.

Every secret here is generated from a seeded PRNG at import time; none is a realistic literal
that a secret scanner (or a reader) would mistake for a live credential.
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
import unicodedata
from collections import namedtuple
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fleetmem.core.redact import (
    REDACTED,
    find_secrets,
    redact,
    redact_value,
    strip_invisible,
)
from fleetmem.core.redact_rules import RULE_NAMES as _RULE_NAMES

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64URL = ALNUM + "-_"
_rng = random.Random(1)


def gen(k: int, alphabet: str = ALNUM) -> str:
    """k characters from alphabet, with at least one digit and one uppercase letter when the
    alphabet has them (a real key practically always does; the redactor relies on it for
    the short, prose-like prefixes sk-, pypi-, hf_)."""
    while True:
        body = "".join(_rng.choices(alphabet, k=k))
        has_digit = any(c.isdigit() for c in body) or not any(c.isdigit() for c in alphabet)
        has_upper = any(c.isupper() for c in body) or not any(c.isupper() for c in alphabet)
        if has_digit and has_upper:
            return body


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_jwt() -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": gen(12), "iat": 1700000000}).encode())
    return f"{header}.{payload}.{gen(43, B64URL)}"


def make_pem(kind: str = "RSA PRIVATE KEY", newline: str = "\n") -> str:
    body = newline.join(gen(64, ALNUM + "+/") for _ in range(4))
    return f"-----BEGIN {kind}-----{newline}{body}{newline}-----END {kind}-----"


# rule name -> generated tokens of that shape (several where the format has variants)
TOKENS: dict[str, list[str]] = {
    "github_token": [f"{p}_{gen(36)}" for p in ("ghp", "gho", "ghu", "ghs", "ghr")],
    "github_fine_grained_token": [f"github_pat_{gen(22)}_{gen(59)}"],
    "aws_access_key_id": [p + gen(16, UPPER_ALNUM) for p in ("AKIA", "ASIA")],
    "slack_token": [
        f"xox{c}-{gen(12, string.digits)}-{gen(13, string.digits)}-{gen(24)}" for c in "bpars"
    ],
    "stripe_key": [f"sk_live_{gen(24)}", f"rk_live_{gen(24)}"],
    "openai_api_key": [f"sk-{gen(48)}", f"sk-proj-{gen(40, B64URL)}{gen(20)}"],
    "anthropic_api_key": [f"sk-ant-api03-{gen(93, B64URL)}AA"],
    "google_api_key": [f"AIza{gen(35, B64URL)}"],
    "gitlab_token": [f"glpat-{gen(20, B64URL)}"],
    "npm_token": [f"npm_{gen(36)}"],
    "pypi_token": [f"pypi-AgEIcHlwaS5vcmc{gen(60, B64URL)}"],
    "huggingface_token": [f"hf_{gen(34, string.ascii_letters)}"],
    "sendgrid_api_key": [f"SG.{gen(22, B64URL)}.{gen(43, B64URL)}"],
    "age_secret_key": [f"AGE-SECRET-KEY-1{gen(58, UPPER_ALNUM)}"],
    "jwt": [make_jwt()],
}
ALL_TOKENS = [(name, tok) for name, toks in TOKENS.items() for tok in toks]
TOKEN_VALUES = [tok for _, tok in ALL_TOKENS]


# --- every token rule ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "token"), ALL_TOKENS)
def test_token_is_replaced_and_surroundings_kept(name: str, token: str) -> None:
    text = f"before {token} after\nnext line"
    assert redact(text) == f"before {REDACTED} after\nnext line"
    assert find_secrets(text) == [name]


@pytest.mark.parametrize(("name", "token"), ALL_TOKENS)
@pytest.mark.parametrize("punct", [".", ",", ")", "]", ";", '"', "'"])
def test_trailing_punctuation_is_kept(name: str, token: str, punct: str) -> None:
    text = f"see ({token}{punct} ok"
    assert redact(text) == f"see ({REDACTED}{punct} ok"


@pytest.mark.parametrize(("name", "token"), ALL_TOKENS)
def test_token_alone_and_at_edges(name: str, token: str) -> None:
    assert redact(token) == REDACTED
    assert redact(f'"{token}"') == f'"{REDACTED}"'
    assert redact(f"key={token}") == f"key={REDACTED}"


def test_token_split_by_invisible_characters_is_still_caught() -> None:
    token = TOKENS["github_token"][0]
    split = token[:2] + "\u200b" + token[2:10] + "\u202e" + token[10:]
    assert redact(f"x {split} y") == f"x {REDACTED} y"


def test_megabyte_long_token_is_redacted_whole() -> None:
    token = "ghp_" + "a1B" * 350_000
    assert redact(f"t={token}.") == f"t={REDACTED}."


def test_sk_needs_a_long_key_like_run() -> None:
    assert redact("sk-abc123") == "sk-abc123"
    assert redact(f"sk-{gen(19)}") != REDACTED
    assert redact(f"sk-{gen(20)}") == REDACTED


def test_aws_access_key_id_needs_exact_shape() -> None:
    key = TOKENS["aws_access_key_id"][0]
    assert redact(key + "X") == key + "X"  # 17 characters after the prefix: something else
    assert redact(key.lower()) == key.lower()


# --- AWS secret key in assignments -----------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "aws_secret_access_key = {v}",
        "AWS_SECRET_ACCESS_KEY: {v}",
        'AWS_SECRET_ACCESS_KEY="{v}"',
        '"aws_secret_access_key": "{v}"',
        "export AWS_SECRET_ACCESS_KEY={v}",
        "aws_secret_key={v}",
    ],
)
def test_aws_secret_access_key(template: str) -> None:
    value = gen(40, ALNUM + "/+")
    text = template.format(v=value)
    assert redact(text) == template.format(v=REDACTED)
    assert find_secrets(text) == ["aws_secret_access_key"]


# --- PEM private key blocks ------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind",
    [
        "PRIVATE KEY",
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ],
)
def test_pem_block_replaced_whole(kind: str) -> None:
    block = make_pem(kind)
    text = f"key follows:\n{block}\nand then text"
    assert redact(text) == f"key follows:\n{REDACTED}\nand then text"
    assert find_secrets(text) == ["private_key_block"]


def test_pem_block_with_escaped_newlines_in_json() -> None:
    block = make_pem(newline="\\n")
    text = json.dumps({"private_key": block.replace("\\n", "\n"), "x": 1})
    assert block in text
    out = redact(text)
    assert "BEGIN" not in out
    assert out.endswith(f'"{REDACTED}", "x": 1}}')


def test_unterminated_pem_block_redacts_to_the_end() -> None:
    head = make_pem().split("-----END")[0]
    assert redact("intro " + head + "\nmore lines\nlast") == "intro " + REDACTED


def test_public_key_and_certificate_are_kept() -> None:
    for kind in ("PUBLIC KEY", "CERTIFICATE"):
        text = f"-----BEGIN {kind}-----\nMIIBIjANBg\n-----END {kind}-----"
        assert redact(text) == text


# --- credentials in URLs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://user:hunter2@example.com/x", f"https://user:{REDACTED}@example.com/x"),
        ("postgres://app:s3cr3t@db:5432/main", f"postgres://app:{REDACTED}@db:5432/main"),
        ("redis://:hunter2@cache:6379", f"redis://:{REDACTED}@cache:6379"),
        ("see https://u:p@ss@host.example.", f"see https://u:{REDACTED}@host.example."),
        (
            "git clone https://x:tok123@github.com/o/r.git",
            f"git clone https://x:{REDACTED}@github.com/o/r.git",
        ),
    ],
)
def test_url_credentials_keep_scheme_user_and_host(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert find_secrets(text) == ["url_credentials"]


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com:8443/path?q=1",
        "ssh://git@github.com/org/repo.git",
        "https://",
        "mailto:someone@example.com",
        "http://[::1]:8080/",
    ],
)
def test_urls_without_credentials_are_kept(text: str) -> None:
    assert redact(text) == text


def test_url_with_token_as_password_names_the_token() -> None:
    token = TOKENS["github_token"][0]
    text = f"https://x-access-token:{token}@github.com/o/r"
    assert redact(text) == f"https://x-access-token:{REDACTED}@github.com/o/r"
    assert find_secrets(text) == ["github_token"]


# --- Authorization headers -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.DEF-123_x", f"Authorization: Bearer {REDACTED}"),
        ("authorization: bearer abc123XYZ.", f"authorization: bearer {REDACTED}."),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", f"Authorization: Basic {REDACTED}"),
        ("Authorization: token abcdef0123456789", f"Authorization: token {REDACTED}"),
        (
            "curl -H 'Authorization: Bearer abc123' https://api",
            f"curl -H 'Authorization: Bearer {REDACTED}' https://api",
        ),
        ('{"Authorization": "Bearer abc123"}', f'{{"Authorization": "Bearer {REDACTED}"}}'),
        ("Proxy-Authorization: Basic Zm9vOmJhcg==", f"Proxy-Authorization: Basic {REDACTED}"),
        ("Authorization: a1b2c3d4e5f6g7h8", f"Authorization: {REDACTED}"),
        (
            'Authorization: Digest username="u", response="ab12"',
            f"Authorization: Digest {REDACTED}",
        ),
    ],
)
def test_authorization_header(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert find_secrets(text) == ["authorization_header"]


def test_authorization_bearer_jwt_names_the_jwt() -> None:
    jwt = TOKENS["jwt"][0]
    assert redact(f"Authorization: Bearer {jwt}") == f"Authorization: Bearer {REDACTED}"
    assert find_secrets(f"Authorization: Bearer {jwt}") == ["jwt"]


def test_standalone_bearer_token() -> None:
    value = gen(32, ALNUM + "._-")
    assert redact(f'headers["X"] = "Bearer {value}"') == f'headers["X"] = "Bearer {REDACTED}"'
    assert redact("the bearer of this letter") == "the bearer of this letter"


# --- generic secret assignments --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2", "password=<R>"),
        ("password = hunter2 # comment", "password = <R> # comment"),
        ("passwd: hunter2", "passwd: <R>"),
        ("api_key: abc123", "api_key: <R>"),
        ("apikey=abc123", "apikey=<R>"),
        ("API-KEY: abc123", "API-KEY: <R>"),
        ("X-Api-Key: abc123", "X-Api-Key: <R>"),
        ("SECRET=abc123", "SECRET=<R>"),
        ("client_secret = 'abc 123'", "client_secret = '<R>'"),
        ("access_token=abc123&next=2", "access_token=<R>&next=2"),
        ('private_key = "abc123"', 'private_key = "<R>"'),
        ("export DB_PASSWORD='p@ss word'", "export DB_PASSWORD='<R>'"),
        ("GITHUB_TOKEN=abc123", "GITHUB_TOKEN=<R>"),
        ('{"password": "hunter2", "user": "bob"}', '{"password": "<R>", "user": "bob"}'),
        ('{"password":"a\\"b"}', '{"password":"<R>"}'),
        ('{\\"password\\": \\"hunter2\\"}', '{\\"password\\": \\"<R>\\"}'),
        ("'password' => 'hunter2'", "'password' => '<R>'"),
        ('password := "hunter2"', 'password := "<R>"'),
        ("mysql --password hunter2 -u root", "mysql --password <R> -u root"),
        ("tool --api-key=abc123 --verbose", "tool --api-key=<R> --verbose"),
        ("keytool -storepass hunter2", "keytool -storepass <R>"),
        ('password: str = "hunter2"', 'password: str = "<R>"'),
        ("password=hunter2.", "password=<R>."),
        ("(token=abc123)", "(token=<R>)"),
        ("[password=abc]", "[password=<R>]"),
        ("password=abc;user=x", "password=<R>;user=x"),
        ("Server=db;Uid=app;Pwd=hunter2;", "Server=db;Uid=app;Pwd=<R>;"),
        ("AccountKey=abc123==;EndpointSuffix=x", "AccountKey=<R>;EndpointSuffix=x"),
        ("DB_PASS=hunter2", "DB_PASS=<R>"),
        ("PASSPHRASE: correct horse", "PASSPHRASE: <R>"),
        ("password = two words  # note", "password = <R>  # note"),
        ('password: "unterminated', 'password: "<R>'),
    ],
)
def test_secret_assignment_value_replaced_key_kept(text: str, expected: str) -> None:
    assert redact(text) == expected.replace("<R>", REDACTED)
    assert find_secrets(text) == ["secret_assignment"]


def test_case_insensitive_rules_when_lowercasing_changes_length() -> None:
    # "İ".lower() is two characters, so the rules cannot search the lowercased copy and take
    # their IGNORECASE path instead; the result must be the same.
    for lead in ("I", "\u0130"):
        text = f"{lead} PASSWORD=hunter2 Authorization: Bearer abc123 --API-KEY xyz"
        expected = f"{lead} PASSWORD=<R> Authorization: Bearer <R> --API-KEY <R>"
        assert redact(text) == expected.replace("<R>", REDACTED)


def test_assignment_with_a_token_names_the_token() -> None:
    token = TOKENS["openai_api_key"][1]
    text = f'OPENAI_API_KEY="{token}"'
    assert redact(text) == f'OPENAI_API_KEY="{REDACTED}"'
    assert find_secrets(text) == ["openai_api_key"]


# --- no false positives ----------------------------------------------------------------------

ORDINARY = [
    "",
    "hello world",
    "password=",
    "password:",
    "password = \n",
    "the password is strong",
    "Passwords must be rotated every 90 days.",
    "passwordless=true",
    "password_file=/run/secrets/db",
    "skeleton",
    "risk-free",
    "task-1234",
    "desk-lamp and a sk-short",
    "sk-learn-compatible-estimators-here",
    "da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 (HEAD -> main)",
    "123e4567-e89b-12d3-a456-426614174000",
    "password = get_password()",
    "token = tokens[0]",
    "password = os.environ['DB_PASSWORD']",
    "password: str",
    "password: Optional[str] = None",
    "token = None",
    "secret: null",
    '"password": ""',
    "password=${DB_PASSWORD}",
    "password: {{ vault_db_password }}",
    "password=$DB_PASSWORD",
    "password=<your-password>",
    "password=********",
    "PWD=/home/me/project",
    "max_tokens=100",
    "num_tokens: 12",
    "if password == other:",
    "password != ''",
    "secretary: Ada",
    "tokenizer: bert",
    "monkey=banana",
    "mysql --password --user root",
    "--no-color --verbose",
    "https://example.com/path?q=1&page=2",
    "ssh git@github.com",
    "the bearer of good news",
    "Authorization: required",
    "Authorization: Bearer",
    "Authorization: Bearer ${TOKEN}",
    "eyJ is how base64 JSON starts",
    "AKIA",
    "ghp_short",
    "hf_hub_download(repo_id='x')",
    "npm_config_cache=/tmp/npm",
    "pypi-simple-index-mirror-configuration-for-the-internal-build-farm",
    "-----BEGIN CERTIFICATE-----",
    "Email me at someone@example.com.",
    "def f(password: str, token: str | None = None) -> None: ...",
    "x = a if b else c  # 100% fine; risk: low",
    "Ünïcödé text — with dashes – and “quotes” 漢字 🙂",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_no_false_positive(text: str) -> None:
    assert redact(text) == strip_invisible(text)
    assert find_secrets(text) == []


# --- find_secrets ----------------------------------------------------------------------------


def test_find_secrets_names_in_order_of_first_match_deduplicated() -> None:
    aws = TOKENS["aws_access_key_id"][0]
    gh1, gh2 = TOKENS["github_token"][:2]
    text = f"a {aws} b {gh1} c password=x d {gh2} e {aws}"
    assert find_secrets(text) == ["aws_access_key_id", "github_token", "secret_assignment"]


@pytest.mark.parametrize(("name", "token"), ALL_TOKENS)
def test_find_secrets_never_returns_the_value(name: str, token: str) -> None:
    names = find_secrets(f"value: {token}")
    assert names
    assert all(token not in n and n in _RULE_NAMES for n in names)


def test_find_secrets_is_empty_on_clean_text() -> None:
    assert find_secrets("nothing to see here") == []


# --- invisible characters --------------------------------------------------------------------

CONTROLS = ["\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\r", "\x1b", "\x1f", "\x7f", "\x85"]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u180e"]
BIDI = ["\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e"]
BIDI += ["\u2066", "\u2067", "\u2068", "\u2069", "\u061c"]
OTHER_CF = ["\u00ad", "\u2061", "\u2064", "\u206a", "\ufff9", "\U000e0001", "\U000e0041"]


@pytest.mark.parametrize("char", CONTROLS + ZERO_WIDTH + BIDI + OTHER_CF)
def test_each_invisible_class_is_stripped(char: str) -> None:
    assert strip_invisible(f"a{char}b{char}") == "ab"
    assert redact(f"a{char}b") == "ab"


def test_newline_and_tab_are_kept() -> None:
    assert strip_invisible("a\nb\tc\r\n") == "a\nb\tc\n"


def test_lone_surrogates_are_stripped() -> None:
    assert strip_invisible("a\ud800b\udfffc") == "abc"


def test_every_format_character_of_this_python_is_stripped() -> None:
    cf = "".join(
        chr(cp) for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cf"
    )
    assert len(cf) > 150
    assert strip_invisible("x" + cf + "y") == "xy"


def test_visible_unicode_is_kept() -> None:
    text = "café 漢字 🙂 \U0001f469\u200d\U0001f4bb ä"  # the ZWJ goes; the rest stays
    assert strip_invisible(text) == text.replace("\u200d", "")


# --- non-str input and failure ---------------------------------------------------------------


def test_non_str_is_converted() -> None:
    token = TOKENS["github_token"][0]
    assert redact(12345) == "12345"  # type: ignore[arg-type]
    assert redact(["x", token]) == f"['x', '{REDACTED}']"  # type: ignore[arg-type]
    assert find_secrets({"k": token}) == ["github_token"]  # type: ignore[arg-type]


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")


def test_never_raises_and_fails_closed() -> None:
    assert redact(_Unprintable()) == REDACTED  # type: ignore[arg-type]
    assert find_secrets(_Unprintable()) == ["redactor_error"]  # type: ignore[arg-type]


# --- redact_value ----------------------------------------------------------------------------

Pair = namedtuple("Pair", ["left", "right"])


def test_redact_value_walks_nested_structures() -> None:
    token = TOKENS["github_token"][0]
    value: Any = {
        "plain": "hello",
        token: "the key itself is secret",
        "list": [1, 2.5, None, True, f"password={token}", ("t", token)],
        "nested": {"deeper": [{"x": token}]},
        "pair": Pair("a", token),
        "set": frozenset({token, "b"}),
        "bytes": b"left alone",
        7: token,
    }
    out: Any = redact_value(value)
    assert out["plain"] == "hello"
    assert out[REDACTED] == "the key itself is secret"
    assert out["list"] == [1, 2.5, None, True, f"password={REDACTED}", ("t", REDACTED)]
    assert out["nested"] == {"deeper": [{"x": REDACTED}]}
    assert out["pair"] == Pair("a", REDACTED) and type(out["pair"]) is Pair
    assert out["set"] == frozenset({REDACTED, "b"})
    assert out["bytes"] == b"left alone"
    assert out[7] == REDACTED
    assert token not in repr(out)
    assert value["nested"]["deeper"][0]["x"] == token  # the input is not mutated


def test_redact_value_scalars_pass_through() -> None:
    for scalar in (None, 0, 1.5, True, b"x"):
        assert redact_value(scalar) == scalar
    assert redact_value("a\u200bb") == "ab"


def test_redact_value_cycles_and_depth_fail_closed() -> None:
    loop: list[Any] = ["x"]
    loop.append(loop)
    assert redact_value(loop) == ["x", REDACTED]
    deep: Any = "leaf"
    for _ in range(500):
        deep = [deep]
    out: Any = redact_value(deep)
    for _ in range(200):
        out = out[0]
    assert out == REDACTED


# --- idempotence and properties --------------------------------------------------------------

FRAGMENTS = [
    *TOKEN_VALUES,
    REDACTED,
    "password",
    "passwd",
    "PASS",
    "secret",
    "token",
    "api_key",
    "pwd",
    "Authorization",
    "Bearer ",
    "Basic ",
    "digest ",
    "bearer",
    "aws_secret_access_key",
    gen(40, ALNUM + "/+"),
    "=",
    "==",
    ":",
    ": ",
    " = ",
    ":=",
    "=>",
    '"',
    "'",
    "`",
    '\\"',
    "\\",
    " ",
    "  ",
    "\n",
    "\t",
    ".",
    ",",
    ";",
    ")",
    "]",
    "[",
    "(",
    "{",
    "}",
    "&",
    "@",
    "/",
    "-",
    "--",
    "://",
    "https://",
    "user:",
    "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "--BEGIN RSA PRIVATE KEY",
    "${X}",
    "None",
    "str",
    "sk-",
    "ghp_",
    "eyJ",
    "AKIA",
    "abc123",
    "hunter2",
    "x",
    "\u200b",
    "\r",
    # the forms added for issue 16: escapes, base64, joins, block scalars, command lines
    "%41",
    "%5F",
    "\\u005f",
    "&#95;",
    "|",
    "|-",
    "\\\n",
    '" "',
    "' + '",
    "QUFBQUFBQUFBQUFBQUFBQUFB",
    base64.b64encode(b"password=hunter2").decode(),
    "machine ",
    "login ",
    "password ",
    "-p",
    "-u",
    "mysql ",
    "sshpass ",
    "<password>",
    "</password>",
    "session_key",
    gen(24),
    "dop_v1_",
    "glsa_",
    "dp.st.",
]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=25).map(
    "".join
)


@given(texts)
@settings(max_examples=400, deadline=None)
def test_redact_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@pytest.mark.parametrize("text", ORDINARY + [f"x {t} y" for t in TOKEN_VALUES])
def test_redact_is_idempotent_on_examples(text: str) -> None:
    assert redact(redact(text)) == redact(text)


@given(st.text())
@settings(deadline=None)
def test_redact_never_raises_on_arbitrary_text(text: str) -> None:
    out = redact(text)
    assert isinstance(out, str)
    assert isinstance(find_secrets(text), list)


@given(st.text(), st.sampled_from(TOKEN_VALUES), st.text())
@settings(max_examples=300, deadline=None)
def test_embedded_token_never_survives(prefix: str, token: str, suffix: str) -> None:
    text = f"{prefix} {token} {suffix}"
    assert token not in redact(text)
    names = find_secrets(text)
    assert names and all(token not in n for n in names)


@given(texts, st.sampled_from(TOKEN_VALUES), texts)
@settings(max_examples=300, deadline=None)
def test_embedded_token_never_survives_among_fragments(
    prefix: str, token: str, suffix: str
) -> None:
    # Fragments include tokens; a copy glued into the surrounding text may legitimately stay
    # (AKIA + 16 + "0" is not an access key id), so only the inserted copy is judged.
    assume(token not in prefix + suffix)
    assert token not in redact(f"{prefix} {token} {suffix}")


@given(texts)
@settings(deadline=None)
def test_output_has_no_invisible_characters(text: str) -> None:
    out = redact(text)
    assert strip_invisible(out) == out


# --- hostile input ---------------------------------------------------------------------------


def _fill(unit: str, size: int = 64 * 1024) -> str:
    return (unit * (size // len(unit) + 1))[:size]


HOSTILE = {
    "run_of_a": "a" * 65536,
    "run_of_ghp": _fill("ghp_"),
    "run_of_equals": "=" * 65536,
    "begin_without_end": _fill("-----BEGIN PRIVATE KEY-----\n"),
    "scheme_without_host": _fill("https://"),
    "run_of_dashes": "-" * 65536,
    "run_of_eyj": _fill("eyJ"),
    "unterminated_quotes": _fill('password="'),
    "dense_assignments": _fill("password=a "),
    "dense_short_strong_keys": _fill("pwd=a "),
    "dense_short_weak_keys": _fill("pw=a "),
    "dense_mask_like_values": _fill("token=x\n"),
    "cli_like": _fill("-token "),
    "at_signs": "://a:" + "@" * 65536,
    "mixed_unicode": _fill("aé漢\u200b\u202e🙂 =:\\\"'"),
    "one_long_token": "sk-" + _fill("A1b2"),
    # prefixes glued to a word, so every start is refused by the left boundary
    "refused_sk_prefixes": "x" + _fill("sk-a"),
    "refused_eyj_prefixes": _fill("aeyJ"),
    "refused_glc_prefixes": "x" + _fill("glc_"),
    "dense_escapes": _fill("%41\\u0042&#67;"),
    "base64_words": _fill("QUFBQUFBQUFBQUFBQUFBQUFB "),
    "yaml_block_indicators": _fill("password: |\n"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_64kb_completes(kind: str) -> None:
    text = HOSTILE[kind]
    out = redact(text)
    assert isinstance(out, str)
    assert redact(out) == out


def test_hostile_begin_without_end_is_fully_masked() -> None:
    assert redact(HOSTILE["begin_without_end"]) == REDACTED
    assert redact(HOSTILE["one_long_token"]) == REDACTED
