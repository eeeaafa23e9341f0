"""``[mcp.NAME]`` upstreams and ``[memory] provider`` naming (seed 000 REQ-1, REQ-2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetmem.config import load_global, load_settings
from fleetmem.errors import ConfigError


def write(home: Path, text: str) -> Path:
    path = home / "fleetmem.toml"
    path.write_text(text, encoding="utf-8")
    return path


def load_error(home: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_global(home)
    return info.value


def test_stdio_and_http_upstreams_load(home: Path) -> None:
    write(
        home,
        """
[memory]
provider = "zep"

[mcp.zep]
url = "https://zep.example.net/mcp"
headers = { Authorization = "ZEP_AUTH", X-Tenant = "ZEP_TENANT" }
connect_timeout = "5s"
call_timeout = "20s"

[mcp.mem0]
command = "mem0-mcp"
args = ["--store", "/var/lib/mem0"]
env = { MEM0_DIR = "/var/lib/mem0" }
shared = false
""",
    )
    settings = load_global(home)
    zep, mem0 = settings.mcp["zep"], settings.mcp["mem0"]
    assert settings.memory.provider == "zep"
    assert (zep.transport, zep.url, dict(zep.headers)) == (
        "http",
        "https://zep.example.net/mcp",
        {"Authorization": "ZEP_AUTH", "X-Tenant": "ZEP_TENANT"},
    )
    assert (zep.connect_timeout_s, zep.call_timeout_s, zep.shared) == (5.0, 20.0, True)
    assert (mem0.transport, mem0.args, dict(mem0.env), mem0.shared) == (
        "stdio",
        ("--store", "/var/lib/mem0"),
        {"MEM0_DIR": "/var/lib/mem0"},
        False,
    )


def test_a_dropin_may_declare_the_provider_upstream(home: Path) -> None:
    write(home, '[memory]\nprovider = "ref"\n')
    (home / "fleetmem.d").mkdir()
    (home / "fleetmem.d" / "10-ref.toml").write_text('[mcp.ref]\ncommand = "ref-mcp"\n')
    assert load_global(home).mcp["ref"].command == "ref-mcp"


def test_provider_must_name_a_declared_upstream(home: Path) -> None:
    source = write(home, '[memory]\nprovider = "mem0"\n[mcp.zep]\ncommand = "zep"\n')
    error = load_error(home)
    assert (error.key, error.value, error.source) == ("memory.provider", "mem0", str(source))


def test_provider_with_shared_false_fails_naming_key_and_value(home: Path) -> None:
    write(home, '[memory]\nprovider = "mem0"\n[mcp.mem0]\ncommand = "m"\nshared = false\n')
    error = load_error(home)
    assert (error.key, error.value) == ("memory.provider", "mem0")
    assert "mcp.mem0.shared is false" in error.reason
    # Not the provider: an unshared upstream is fine.
    write(home, '[mcp.mem0]\ncommand = "m"\nshared = false\n')
    assert load_global(home).mcp["mem0"].shared is False


def test_an_upstream_declared_in_a_project_file_is_refused(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    (project / ".fleetmem.toml").write_text('[mcp.mem0]\ncommand = "mem0-mcp"\n')
    write(home, "")
    with pytest.raises(ConfigError) as info:
        load_settings(home, project)
    assert info.value.key == "mcp.mem0"
    assert "global-only" in info.value.reason
    # ...so a provider named only there fails the global load naming [memory] provider.
    write(home, '[memory]\nprovider = "mem0"\n')
    error = load_error(home)
    assert (error.key, error.value) == ("memory.provider", "mem0")


def test_upstreams_survive_applying_a_project_file(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    (project / ".fleetmem.toml").write_text("[agent.bot]\nmemory_record = false\n")
    write(home, '[memory]\nprovider = "ref"\n[mcp.ref]\ncommand = "ref-mcp"\n')
    settings = load_settings(home, project)
    assert settings.memory.provider == "ref" and "ref" in settings.mcp


@pytest.mark.parametrize(
    ("text", "key", "reason"),
    [
        ("[mcp.zep]\n", "mcp.zep.command", "set command"),
        ('[mcp.zep]\ncommand = "z"\nurl = "http://127.0.0.1:9/mcp"\n', "mcp.zep.url", "both"),
        ('[mcp.zep]\nurl = "http://127.0.0.1:9/mcp"\nargs = ["x"]\n', "mcp.zep.args", "stdio"),
        ('[mcp.zep]\nurl = "http://127.0.0.1:9/mcp"\nenv = { A = "b" }\n', "mcp.zep.env", "stdio"),
        ('[mcp.zep]\ncommand = "z"\nheaders = { A = "B" }\n', "mcp.zep.headers", "HTTP"),
        ('[mcp.builtin]\ncommand = "z"\n', "mcp.NAME", "built-in"),
        ('[mcp.a__b]\ncommand = "z"\n', "mcp.NAME", "invalid name"),
        ('[mcp.Zep]\ncommand = "z"\n', "mcp.NAME", "invalid name"),
        ('[mcp.zep]\nurl = "ftp://zep/mcp"\n', "mcp.zep.url", "http"),
        (
            '[mcp.zep]\nurl = "https://zep"\nheaders = { A = "sk-live 123" }\n',
            "mcp.zep.headers",
            "NAME",
        ),
        ('[mcp.zep]\ncommand = "z"\nargs = "x"\n', "mcp.zep.args", "array"),
        ('[mcp.zep]\ncommand = "z"\nenv = { "1A" = "b" }\n', "mcp.zep.env", "environment"),
        ('[mcp.zep]\ncommand = "z"\ncall_timeout = "10m"\n', "mcp.zep.call_timeout", "between"),
        ('[mcp.zep]\ncommand = "z"\nshared = "yes"\n', "mcp.zep.shared", "boolean"),
        ('[mcp.zep]\ncommand = "z"\nport = 1\n', "mcp.zep.port", "unknown key"),
    ],
)
def test_bad_upstreams_name_the_key(home: Path, text: str, key: str, reason: str) -> None:
    write(home, text)
    error = load_error(home)
    assert error.key == key, error
    assert reason in error.reason, error


def test_a_header_value_pasted_in_place_of_a_variable_name_is_not_echoed(home: Path) -> None:
    write(home, '[mcp.zep]\nurl = "https://zep"\nheaders = { Authorization = "Bearer s3cr3t" }\n')
    error = load_error(home)
    assert "s3cr3t" not in str(error)
