from __future__ import annotations

import hashlib
import posixpath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fleetmem.core.scope import (
    MAX_REMOTE_KEY_BYTES,
    Scope,
    agent_scope,
    local_repo_key,
    parse_scope,
    project_scope,
    relativize,
    repo_key_from_remote,
    validate_agent_name,
    validate_repo_key,
)
from fleetmem.errors import InvalidInput

# --- repository keys from remotes -------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/api.git",
        "git@github.com:acme/api",
        "git@github.com:/acme/api.git",
        "github.com:acme/api.git",
        "https://github.com/acme/api",
        "https://github.com/acme/api.git",
        "https://github.com/acme/api/",
        "https://github.com/acme/api.git/",
        "https://user:token@github.com/acme/api",
        "https://x-access-token:ghp_abc123@github.com/acme/api.git",
        "https://ghp_abc123@github.com/acme/api.git",
        "ssh://git@github.com/acme/api",
        "ssh://git@github.com:2222/acme/api.git",
        "ssh://git@GitHub.com/acme/api.git",
        "git+ssh://git@github.com/acme/api.git",
        "https://github.com:443/acme/api/",
        "http://github.com/acme/api",
        "git://github.com/acme/api.git",
        "HTTPS://GITHUB.COM/acme/api",
        "https://github.com./acme/api",
        "https://github.com/acme/api?private_token=s3cret",
        "https://github.com/acme/api#readme",
        "persistent-https::https://github.com/acme/api",
        "https://github.com/acme/%61pi",
    ],
)
def test_remote_forms_normalise_to_the_same_key(url: str) -> None:
    assert repo_key_from_remote(url) == "github.com/acme/api"


def test_host_is_lowercased_but_path_keeps_its_case() -> None:
    assert repo_key_from_remote("https://GitHub.COM/Acme/API.git") == "github.com/Acme/API"
    assert repo_key_from_remote("git@GITHUB.com:Acme/API") == "github.com/Acme/API"


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://gitlab.com/group/sub/repo.git", "gitlab.com/group/sub/repo"),
        ("git@gitlab.com:group/sub/deeper/repo.git", "gitlab.com/group/sub/deeper/repo"),
        (
            "ssh://git@git.internal.example:7999/scm/proj/repo.git",
            "git.internal.example/scm/proj/repo",
        ),
        ("https://dev.azure.com/org/project/_git/repo", "dev.azure.com/org/project/_git/repo"),
        ("git@host-1.example:srv/git/api.git", "host-1.example/srv/git/api"),
        ("https://localhost:3000/acme/api", "localhost/acme/api"),
        ("https://10.0.0.5/acme/api", "10.0.0.5/acme/api"),
        ("user:pass@host.example:acme/api", "host.example/acme/api"),
        ("https://user:p@ss@github.com/acme/api", "github.com/acme/api"),
        ("https://bücher.example/acme/api", "xn--bcher-kva.example/acme/api"),
        # Non-ASCII path characters: NFC first, then %XX escapes of the UTF-8 bytes.
        ("https://example.com/acme/cafe\u0301", "example.com/acme/caf%C3%A9"),
        ("https://example.com/acme/caf\u00e9", "example.com/acme/caf%C3%A9"),
        ("https://example.com/acme/api.github.io", "example.com/acme/api.github.io"),
        ("https://example.com/acme/api.git.git", "example.com/acme/api.git"),
    ],
)
def test_other_remote_forms(url: str, key: str) -> None:
    assert repo_key_from_remote(url) == key


@pytest.mark.parametrize(
    "url",
    [
        "",
        "/srv/git/api.git",
        "/srv/git/api",
        "file:///srv/git/api",
        "FILE:///srv/git/api.git",
        "../api",
        "./api",
        "api",
        "~/repos/api.git",
        "C:/repos/api.git",
        "C:\\repos\\api.git",
        "dir/with:colon",
        # no path, or nothing left once .git and slashes go
        "https://github.com",
        "https://github.com/",
        "https://github.com/.git",
        "git@github.com:",
        "git@github.com:.git",
        # dot segments, raw or escaped
        "https://github.com/acme/../api",
        "https://github.com/../etc/passwd",
        "git@github.com:acme/./api.git",
        "https://github.com/acme/%2e%2e/api",
        "https://github.com/acme/%2E%2E/api",
        "https://github.com/acme//api",
        # control characters, whitespace, invisible characters
        "https://github.com/acme/api\x00",
        "https://github.com/acme/api\n",
        "https://github.com/acme/\x1bapi",
        "https://github.com/acme/api%00",
        "https://github.com/ac me/api",
        "https://github.com/acme/a\u200bpi",
        "https://github.com/acme/a\u202epi",
        # hosts that cannot be a key segment
        "https://[::1]/acme/api",
        "https://:443/acme/api",
        "ssh://git@/acme/api",
        "https://github.com:notaport/acme/api",
        "https://gith$ub.com/acme/api",
        # credentials that a naive parser would leave in the path
        "https://user:pa/ss@github.com/acme/api",
        "https://github.com/acme/api@evil",
        "https://github.com/acme/api%40token",
        "https://github.com/acme/ap:i",
        "https://github.com/acme/api?user=bot@example.com",
        # bad percent-escapes
        "https://github.com/acme/%ff%fe",
    ],
)
def test_unusable_remotes_give_none(url: str) -> None:
    assert repo_key_from_remote(url) is None


def test_overlong_remote_gives_none_so_the_caller_falls_back() -> None:
    long_path = "/".join(["a" * 50] * 5)
    key = repo_key_from_remote(f"https://github.com/{long_path}")
    assert key is None
    assert repo_key_from_remote(f"https://h.io/{'a' * (MAX_REMOTE_KEY_BYTES - 5)}") is not None
    assert repo_key_from_remote(f"https://h.io/{'a' * (MAX_REMOTE_KEY_BYTES - 4)}") is None


_SECRET = st.text(alphabet="QXZqxz0123456789_", min_size=6, max_size=20).map(lambda s: "S3" + s)
_SEGMENT = st.text(alphabet="abcdefghijklmnop-_.", min_size=1, max_size=12)


@given(
    user=_SECRET,
    password=_SECRET,
    segments=st.lists(_SEGMENT, min_size=1, max_size=4),
    form=st.sampled_from(["https", "ssh", "scp", "token"]),
)
def test_credentials_never_survive_in_a_key(
    user: str, password: str, segments: list[str], form: str
) -> None:
    path = "/".join(segments)
    url = {
        "https": f"https://{user}:{password}@github.com/{path}",
        "ssh": f"ssh://{user}:{password}@github.com:22/{path}.git",
        "scp": f"{user}:{password}@github.com:{path}.git",
        "token": f"https://{password}@github.com/{path}?access_token={user}",
    }[form]
    key = repo_key_from_remote(url)
    if key is not None:
        assert user not in key
        assert password not in key
        assert validate_repo_key(key) == key
        assert key.startswith("github.com/")


@given(st.text(max_size=80))
def test_any_key_from_any_remote_is_a_valid_key(url: str) -> None:
    key = repo_key_from_remote(url)
    if key is not None:
        assert validate_repo_key(key) == key
        assert project_scope(key) == f"project:{key}"


# --- local keys ------------------------------------------------------------------------


def _short_hash(path: str) -> str:
    return hashlib.sha256(path.encode("utf-8")).hexdigest()[:8]


def test_local_key_is_basename_and_hash_of_root() -> None:
    assert local_repo_key("/srv/work/api") == f"local/api-{_short_hash('/srv/work/api')}"


def test_local_key_ignores_trailing_slash_and_dot_segments() -> None:
    expected = local_repo_key("/srv/work/api")
    assert local_repo_key("/srv/work/api/") == expected
    assert local_repo_key("/srv/./work/x/../api") == expected
    assert local_repo_key("//srv/work/api") == expected


def test_local_keys_differ_for_same_basename_elsewhere() -> None:
    assert local_repo_key("/a/api") != local_repo_key("/b/api")
    assert local_repo_key("/a/api").startswith("local/api-")


@pytest.mark.parametrize(
    ("root", "base"),
    [
        ("/home/u/my repo", "my-repo"),
        ("/home/u/café", "caf-"),
        ("/home/u/we:ird@name", "we-ird-name"),
        ("/home/u/v1.2_x-y", "v1.2_x-y"),
        ("/", "repo"),
        ("/home/u/...", "..."),
    ],
)
def test_local_key_sanitises_basename(root: str, base: str) -> None:
    key = local_repo_key(root)
    assert key == f"local/{base}-{_short_hash(root.rstrip('/') or '/')}"
    assert validate_repo_key(key) == key


def test_local_key_basename_is_capped_to_fit_a_scope() -> None:
    key = local_repo_key("/x/" + "n" * 250)
    assert key == f"local/{'n' * 64}-{_short_hash('/x/' + 'n' * 250)}"
    assert parse_scope(project_scope(key)) == Scope("project", key)


def test_local_key_handles_undecodable_path_bytes() -> None:
    root = "/srv/\udcff-bytes"
    key = local_repo_key(root)
    assert key.startswith("local/--bytes-")
    assert validate_repo_key(key) == key


def test_local_key_needs_an_absolute_root() -> None:
    with pytest.raises(InvalidInput) as err:
        local_repo_key("relative/api")
    assert err.value.field == "root"


# --- validating keys given by a harness --------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "github.com/acme/api",
        "gitlab.com/group/sub/repo",
        "local/api-0123abcd",
        "myproject",
        "example.com/acme/caf%C3%A9",
        "a/.../b",
        "a" * 248,
    ],
)
def test_valid_repo_keys(key: str) -> None:
    assert validate_repo_key(key) == key


@pytest.mark.parametrize(
    "key",
    [
        "",
        "a" * 249,
        "é" * 129,
        "example.com/acme/caf\u00e9",  # non-ASCII: keys carry %XX escapes instead
        "example.com/acme/%41",  # an escape of an ASCII byte would be a second spelling
        "example.com/acme/caf%c3%a9",  # escapes are upper-case, one spelling only
        "/github.com/acme/api",
        "github.com/acme/api/",
        "github.com//api",
        "github.com/./api",
        "github.com/../api",
        "..",
        "https://github.com/acme/api",
        "git@github.com:acme/api",
        "github.com:443/acme/api",
        "user@github.com/acme/api",
        "github.com/acme/api?x",
        "github.com/acme/api#x",
        "github.com\\acme\\api",
        "github.com/acme /api",
        " github.com/acme/api",
        "github.com/acme/api\n",
        "github.com/acme/api\x00",
        "github.com/acme/a\u200bpi",
        "github.com/acme/a\u202epi",
        "github.com/acme/a\u00a0pi",
        "github.com/acme/a\u3164pi",
        "example.com/acme/cafe\u0301",
    ],
)
def test_invalid_repo_keys(key: str) -> None:
    with pytest.raises(InvalidInput) as err:
        validate_repo_key(key)
    assert err.value.field == "repo"
    assert err.value.value == key
    assert err.value.reason


# --- scopes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("workspace", Scope("workspace", None)),
        ("project:github.com/acme/api", Scope("project", "github.com/acme/api")),
        ("project:local/api-0123abcd", Scope("project", "local/api-0123abcd")),
        ("agent:claude-code", Scope("agent", "claude-code")),
        ("agent:codex", Scope("agent", "codex")),
        ("agent:review_bot.v2", Scope("agent", "review_bot.v2")),
        ("agent:" + "a" * 64, Scope("agent", "a" * 64)),
    ],
)
def test_parse_scope_round_trips(text: str, scope: Scope) -> None:
    assert parse_scope(text) == scope
    assert str(parse_scope(text)) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "workspace:",
        "workspace:x",
        "Workspace",
        "WORKSPACE",
        " workspace",
        "workspace ",
        "workspace\n",
        "project",
        "project:",
        "agent",
        "agent:",
        "team:x",
        ":github.com/acme/api",
        "Project:github.com/acme/api",
        "project: github.com/acme/api",
        "project:github.com/acme/api ",
        "project:https://github.com/acme/api",
        "project:github.com/acme/../api",
        "project:github.com/acme//api",
        "project:user:token@github.com/acme/api",
        "agent:two words",
        "agent:a/b",
        "agent:-leading-dash",
        "agent:.hidden",
        "agent:x:y",
        "agent:" + "a" * 65,
        "agent:BAD",  # config's [agent.NAME] rule: lower case only
        "agent:Review_Bot",
        "project:" + "a" * 249,
        "x" * 300,
        # unicode tricks
        "work\u200bspace",  # zero-width space
        "\ufeffworkspace",  # byte-order mark
        "workspace\u200d",  # zero-width joiner
        "agent:cl\u202eedua",  # right-to-left override
        "agent:claude\u00a0code",  # no-break space
        "agent:claude\u2028",  # line separator
        "agent:\u3164",  # hangul filler, renders blank
        "agent:cl\u0430ude",  # cyrillic a
        "agent:ｃｌａｕｄｅ",  # fullwidth letters
        "project：github.com/acme/api",  # fullwidth colon
        "wоrkspace",  # cyrillic o
        "agent:caf\u00e9",
        "project:example.com/acme/cafe\u0301",  # not NFC
        "agent:a\x00",
        "agent:a\x7f",
        "agent:a\x85",
    ],
)
def test_parse_scope_rejects(text: str) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_scope(text)
    assert err.value.field == "scope"
    assert err.value.reason


def test_parse_scope_reasons_name_the_problem() -> None:
    with pytest.raises(InvalidInput, match="unknown scope kind"):
        parse_scope("team:x")
    with pytest.raises(InvalidInput, match="needs a value"):
        parse_scope("project:")
    with pytest.raises(InvalidInput, match="256 bytes"):
        parse_scope("agent:" + "é" * 200)
    with pytest.raises(InvalidInput, match="invisible"):
        parse_scope("work\u200bspace")
    with pytest.raises(InvalidInput, match="whitespace"):
        parse_scope("workspace ")


def test_scope_constructor_validates() -> None:
    with pytest.raises(InvalidInput):
        Scope("workspace", "x")
    with pytest.raises(InvalidInput):
        Scope("project", None)
    with pytest.raises(InvalidInput):
        Scope("project", "")
    with pytest.raises(InvalidInput):
        Scope("agent", "bad name")
    with pytest.raises(InvalidInput):
        Scope("team", "x")  # type: ignore[arg-type]


def test_scope_is_frozen_and_hashable() -> None:
    scope = Scope("agent", "codex")
    assert {scope, Scope("agent", "codex")} == {scope}
    with pytest.raises(AttributeError):
        scope.value = "other"  # type: ignore[misc]


def test_project_and_agent_scope_helpers() -> None:
    assert project_scope("github.com/acme/api") == "project:github.com/acme/api"
    assert agent_scope("codex") == "agent:codex"
    with pytest.raises(InvalidInput) as err:
        project_scope("https://github.com/acme/api")
    assert err.value.field == "repo"
    with pytest.raises(InvalidInput) as err:
        project_scope("a" * 249)  # the scope would pass 256 bytes
    assert err.value.field == "repo"
    with pytest.raises(InvalidInput) as err:
        agent_scope("two words")
    assert err.value.field == "agent"
    assert validate_agent_name("claude-code") == "claude-code"


@given(st.text(max_size=40))
def test_parse_scope_accepts_only_what_renders_back(text: str) -> None:
    try:
        scope = parse_scope(text)
    except InvalidInput:
        return
    assert str(scope) == text


# --- relativize --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "root", "cwd", "expected"),
    [
        ("/repo/a.py", "/repo", None, "a.py"),
        ("/repo/src/pkg/mod.py", "/repo", None, "src/pkg/mod.py"),
        ("/repo/src/pkg/", "/repo", None, "src/pkg"),
        ("/repo/src/./pkg//mod.py", "/repo", None, "src/pkg/mod.py"),
        ("/repo/src/../docs/x.md", "/repo", None, "docs/x.md"),
        ("/repo/a.py", "/repo/", None, "a.py"),
        ("/repo/a.py", "/repo/.", None, "a.py"),
        ("//repo/a.py", "/repo", None, "a.py"),
        ("/repo/..", "/repo", None, None),
        ("/repo/../etc/passwd", "/repo", None, None),
        ("/repo/src/../../etc", "/repo", None, None),
        ("/repo-other/a.py", "/repo", None, None),
        ("/repository/a.py", "/repo", None, None),
        ("/rep/a.py", "/repo", None, None),
        ("/etc/passwd", "/repo", None, None),
        ("/repo", "/repo", None, None),
        ("/repo/", "/repo", None, None),
        ("/repo/.", "/repo", None, None),
        ("/repo/src/..", "/repo", None, None),
        # relative paths against cwd, or the root when there is no cwd
        ("a.py", "/repo", None, "a.py"),
        ("src/a.py", "/repo", None, "src/a.py"),
        ("a.py", "/repo", "/repo/src", "src/a.py"),
        ("./a.py", "/repo", "/repo/src", "src/a.py"),
        ("../a.py", "/repo", "/repo/src", "a.py"),
        ("../../a.py", "/repo", "/repo/src", None),
        ("a.py", "/repo", "/elsewhere", None),
        ("../repo/a.py", "/repo", "/elsewhere", "a.py"),
        ("../repo-other/a.py", "/repo", "/repo", None),
        (".", "/repo", "/repo", None),
        ("..", "/repo", "/repo/src", None),
        ("a.py", "/repo", "src", "src/a.py"),
        ("/repo/b.py", "/repo", "/elsewhere", "b.py"),
        # the filesystem root as the repository root
        ("/src/a.py", "/", None, "src/a.py"),
        ("src/a.py", "/", "/", "src/a.py"),
        ("/", "/", None, None),
        ("/../x", "/", None, "x"),
        # control characters
        ("/repo/a\x00.py", "/repo", None, None),
        ("/repo/a\n.py", "/repo", None, None),
        ("/repo/a\x1b.py", "/repo", None, None),
        ("a.py", "/repo", "/repo/s\x00", None),
        ("", "/repo", None, None),
        # unusual but legal names survive
        ("/repo/.hidden", "/repo", None, ".hidden"),
        ("/repo/...", "/repo", None, "..."),
        ("/repo/..foo", "/repo", None, "..foo"),
        ("/repo/with space/ünï.py", "/repo", None, "with space/ünï.py"),
    ],
)
def test_relativize(path: str, root: str, cwd: str | None, expected: str | None) -> None:
    assert relativize(path, root, cwd) == expected


def test_relativize_needs_an_absolute_root() -> None:
    with pytest.raises(InvalidInput) as err:
        relativize("a.py", "repo")
    assert err.value.field == "root"


_PATH_PART = st.sampled_from(["", ".", "..", "...", "a", "b", "repo", "repo-other", "r\x00", "é"])


def _path(parts: list[str], absolute: bool) -> str:
    return ("/" if absolute else "") + "/".join(parts)


@given(
    path_parts=st.lists(_PATH_PART, max_size=8),
    path_absolute=st.booleans(),
    root_parts=st.lists(st.sampled_from(["repo", "a", "..", ".", ""]), max_size=4),
    cwd=st.none() | st.lists(_PATH_PART, max_size=6).map(lambda p: _path(p, True)),
)
def test_relativize_never_escapes(
    path_parts: list[str], path_absolute: bool, root_parts: list[str], cwd: str | None
) -> None:
    path = _path(path_parts, path_absolute)
    root = _path(root_parts, True)
    result = relativize(path, root, cwd)
    if result is None:
        return
    assert not result.startswith("/")
    segments = result.split("/")
    assert ".." not in segments
    assert "." not in segments
    assert "" not in segments
    assert "\x00" not in result
    real_root = posixpath.normpath(root).lstrip("/")
    joined = posixpath.normpath(posixpath.join("/" + real_root, result)).lstrip("/")
    assert joined.startswith(real_root + "/" if real_root else "")
    assert joined != real_root


@given(st.text(max_size=30), st.text(max_size=30), st.none() | st.text(max_size=30))
def test_relativize_never_escapes_on_arbitrary_text(
    path: str, root_tail: str, cwd: str | None
) -> None:
    result = relativize(path, "/" + root_tail, cwd)
    if result is not None:
        assert not result.startswith("/")
        assert ".." not in result.split("/")
        assert result
