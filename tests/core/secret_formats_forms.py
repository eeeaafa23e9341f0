"""Key, URL, command-line, config, encoded and generic formats of the secret corpus.
Importing this module registers them with :mod:`tests.core.secret_corpus`."""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Callable

from tests.core.secret_corpus import (
    ALNUM,
    B64,
    B64URL,
    DIGITS,
    HEX,
    UPPER,
    Sample,
    _add,
    _ctx,
    _rng,
    _tok,
    b64,
    host,
    password,
    pem,
    rand,
    user,
)

# --- keys and certificates ----------------------------------------------------------------


def _pem_format(kind: str) -> Callable[[], Sample]:
    def sample() -> Sample:
        block, body = pem(kind)
        return f"$ cat ~/.keys/id\n{block}\n$ chmod 600 ~/.keys/id", body

    return sample


for _kind in (
    "RSA PRIVATE KEY",
    "EC PRIVATE KEY",
    "PRIVATE KEY",
    "ENCRYPTED PRIVATE KEY",
    "DSA PRIVATE KEY",
    "OPENSSH PRIVATE KEY",
    "PGP PRIVATE KEY BLOCK",
):
    _add("pem_" + _kind.lower().replace(" ", "_"), "keys", _pem_format(_kind))
_tok("age_secret_key", "keys", lambda: "AGE-SECRET-KEY-1" + rand(58, UPPER + DIGITS))


def _kubeconfig_key_data() -> Sample:
    block, _ = pem("RSA PRIVATE KEY")
    data = b64(block)
    text = (
        "users:\n- name: admin\n  user:\n    client-certificate-data: "
        f"{b64('-----BEGIN CERTIFICATE-----')}\n    client-key-data: {data}\n"
    )
    return text, [data]


def _kubeconfig_token() -> Sample:
    token = rand(_rng.randint(40, 60), B64URL)
    return f"users:\n- name: ci\n  user:\n    token: {token}\ncontexts: []\n", [token]


_add("kubeconfig_client_key_data", "keys", _kubeconfig_key_data)
_add("kubeconfig_user_token", "keys", _kubeconfig_token)


def _putty() -> Sample:
    lines = [rand(64, B64) for _ in range(4)]
    text = (
        "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
        f"{rand(64, B64)}\n{rand(40, B64)}\nPrivate-Lines: 4\n"
        + "\n".join(lines)
        + f"\nPrivate-MAC: {rand(64, HEX)}\n"
    )
    return text, lines


_add("putty_private_key", "keys", _putty)


def _jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = (
        base64.urlsafe_b64encode(
            json.dumps({"sub": rand(12), "exp": _rng.randint(10**9, 2 * 10**9)}).encode()
        )
        .decode()
        .rstrip("=")
    )
    return f"{head}.{body}.{rand(43, B64URL)}"


_tok("jwt", "keys", _jwt)

# --- credentials in URLs and DSNs -----------------------------------------------------------


def _url(scheme: str, tail: str, pw: Callable[[], str] = password) -> Callable[[], Sample]:
    def sample() -> Sample:
        secret = pw()
        quoted = urllib.parse.quote(secret, safe="")
        url = f"{scheme}://{user()}:{quoted}@{host()}{tail}"
        text = _rng.choice(
            [
                f"DATABASE_URL={url}",
                f"ERROR could not connect to {url}: timeout",
                json.dumps({"dsn": url}),
                f"  url: {url}",
            ]
        )
        return text, [quoted]

    return sample


_add("dsn_postgres", "url", _url("postgresql", ":5432/app?sslmode=require"))
_add("dsn_mysql", "url", _url("mysql", ":3306/shop"))
_add("dsn_mongodb_srv", "url", _url("mongodb+srv", "/prod?retryWrites=true"))
_add("dsn_redis", "url", _url("rediss", ":6380/0"))
_add("dsn_amqp", "url", _url("amqps", ":5671/vhost"))
_add("url_sftp", "url", _url("sftp", "/upload/"))
_add("url_https_git_token", "url", _url("https", "/acme/api.git", lambda: rand(40, HEX)))
_add(
    "url_token_as_user",
    "url",
    _ctx(
        lambda v: f"git remote add origin https://{v}@git.example.com/acme/api.git",
        lambda: rand(40),
    ),
)

# --- command lines ----------------------------------------------------------------------------

_add(
    "curl_user_password",
    "cli",
    _ctx(lambda v: f"curl -fsS -u {user()}:{v} https://{host()}/api/v1/jobs", password),
)
_add(
    "curl_user_long_option",
    "cli",
    _ctx(lambda v: f"curl --user '{user()}:{v}' https://{host()}/", password),
)
_add(
    "mysql_glued_p",
    "cli",
    _ctx(lambda v: f"mysql -h {host()} -u {user()} -p{v} shop < dump.sql", password),
)
_add(
    "mysqldump_password_option",
    "cli",
    _ctx(lambda v: f"mysqldump --user=root --password={v} --all-databases > all.sql", password),
)
_add(
    "sshpass_p",
    "cli",
    _ctx(lambda v: f"sshpass -p '{v}' ssh -o StrictHostKeyChecking=no {user()}@{host()}", password),
)
_add(
    "pgpassword_env",
    "cli",
    _ctx(lambda v: f"PGPASSWORD={v} psql -h {host()} -U {user()} -d app", password),
)
_add(
    "curl_bearer_header",
    "cli",
    _ctx(
        lambda v: f'curl -H "Authorization: Bearer {v}" https://{host()}/v2/items',
        lambda: rand(48, B64URL),
    ),
)
_add(
    "curl_api_key_header",
    "cli",
    _ctx(lambda v: f"curl -H 'X-Api-Key: {v}' https://{host()}/metrics", lambda: rand(32)),
)
_add(
    "http_basic_header",
    "cli",
    _ctx(
        lambda v: f"GET /admin HTTP/1.1\nHost: x\nAuthorization: Basic {v}\n",
        lambda: b64(f"{user()}:{password()}"),
    ),
)
_add(
    "docker_login_password",
    "cli",
    _ctx(lambda v: f"docker login registry.example.com --username ci --password {v}", password),
)
_add(
    "htpasswd_batch",
    "cli",
    _ctx(lambda v: f"echo done; export ADMIN_PASS='{v}'; ./setup.sh", password),
)

# --- config forms -------------------------------------------------------------------------

_add(
    "env_db_password",
    "config",
    _ctx(
        lambda v: f"APP_ENV=production\nDB_HOST={host()}\nDB_PASSWORD={v}\nDB_PORT=5432\n", password
    ),
)
_add(
    "env_quoted_secret_key",
    "config",
    _ctx(lambda v: f'SECRET_KEY="{v}"\nDEBUG=false\n', lambda: rand(50, ALNUM + "!@#%^&*(-_=+)")),
)
_add(
    "yaml_password",
    "config",
    _ctx(
        lambda v: f"database:\n  host: {host()}\n  user: {user()}\n  password: {v}\n  pool: 5\n",
        password,
    ),
)
_add(
    "yaml_quoted_api_key",
    "config",
    _ctx(lambda v: f"service:\n  name: billing\n  api_key: '{v}'\n", lambda: rand(32)),
)


def _yaml_block() -> Sample:
    secret_lines = [password(), rand(24)]
    indicator = _rng.choice(["|", "|-", ">", ">-"])
    text = (
        f"smtp:\n  host: mail.example.com\n  password: {indicator}\n    {secret_lines[0]}\n"
        f"    {secret_lines[1]}\n  port: 587\n"
    )
    return text, secret_lines


_add("yaml_block_scalar", "config", _yaml_block)
_add(
    "toml_password",
    "config",
    _ctx(lambda v: f'[database]\nurl = "postgres://{host()}/app"\npassword = "{v}"\n', password),
)
_add(
    "toml_multiline_token",
    "config",
    _ctx(lambda v: f'[registry]\ntoken = """{v}"""\n', lambda: rand(40)),
)
_add(
    "ini_password_spaces",
    "config",
    _ctx(
        lambda v: f"[smtp]\nhost = mail.example.com\npassword = {v}\n",
        lambda: f"{password(8)} {password(8)}",
    ),
)
_add(
    "json_password",
    "config",
    _ctx(lambda v: json.dumps({"db": {"user": user(), "password": v, "port": 5432}}), password),
)
_add(
    "json_client_secret",
    "config",
    _ctx(
        lambda v: json.dumps({"client_id": rand(20, DIGITS), "client_secret": v}),
        lambda: rand(40, B64URL),
    ),
)
_add(
    "netrc_one_line",
    "config",
    _ctx(lambda v: f"machine {host()} login {user()} password {v}\n", password),
)
_add(
    "netrc_multi_line",
    "config",
    _ctx(lambda v: f"machine {host()}\n  login {user()}\n  password {v}\n", password),
)
_add(
    "java_properties",
    "config",
    _ctx(
        lambda v: (
            f"spring.datasource.url=jdbc:postgresql://{host()}/app\nspring.datasource.password={v}\n"
        ),
        password,
    ),
)
_add(
    "jdbc_query_password",
    "config",
    _ctx(lambda v: f"jdbc:mysql://{host()}:3306/shop?user=app&password={v}&useSSL=true", password),
)
_add(
    "odbc_connection_string",
    "config",
    _ctx(
        lambda v: f"Driver={{ODBC Driver 18}};Server={host()};Uid=app;Pwd={v};Encrypt=yes", password
    ),
)
_add(
    "python_settings",
    "config",
    _ctx(lambda v: f'DATABASES = {{"default": {{"USER": "app", "PASSWORD": "{v}"}}}}', password),
)
_add(
    "terraform_tfvars",
    "config",
    _ctx(lambda v: f'region        = "eu-west-1"\ndb_admin_password = "{v}"\n', password),
)
_add(
    "xml_password",
    "config",
    _ctx(
        lambda v: (
            f"<datasource>\n  <username>app</username>\n  <password>{v}</password>\n</datasource>"
        ),
        password,
    ),
)

# --- encoded and split forms ----------------------------------------------------------------


def _b64_wrapped() -> Sample:
    token = "ghp_" + rand(36) if _rng.random() < 0.5 else "sk-proj-" + rand(48, B64URL)
    payload = _rng.choice([f"GITHUB_TOKEN={token}\n", f"{token}\n", json.dumps({"token": token})])
    encoded = b64(payload)
    text = _rng.choice([f"echo {encoded} | base64 -d > .env", f"data:\n  config: {encoded}\n"])
    return text, [encoded]


def _b64_k8s_secret() -> Sample:
    secret = password()
    encoded = b64(secret)
    text = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  DB_PASSWORD: {encoded}\n"
    return text, [encoded]


def _url_encoded() -> Sample:
    token = "xoxb-" + rand(12, DIGITS) + "-" + rand(24)
    encoded = urllib.parse.quote(f"token={token}", safe="")
    return f"GET /oauth/callback?state=ok&payload={encoded} HTTP/1.1", [encoded]


def _url_encoded_token() -> Sample:
    token = "glpat-" + rand(20, ALNUM)
    encoded = "".join(f"%{ord(c):02X}" if c in "-_" or _rng.random() < 0.3 else c for c in token)
    return f"redirect to https://ci.example.com/hook?t={encoded}&ok=1", [encoded]


def _json_escaped() -> Sample:
    token = "ghp_" + rand(36)
    escaped = "".join(f"\\u{ord(c):04x}" if _rng.random() < 0.4 else c for c in token)
    return '{"log": "cloning with ' + escaped + '", "level": "info"}', [escaped]


def _split_backslash() -> Sample:
    token = "sk-ant-api03-" + rand(60, B64URL)
    cut = _rng.randint(12, len(token) - 12)
    text = f'export ANTHROPIC_KEY_PART="{token[:cut]}\\\n{token[cut:]}"\n'
    return text, [token[:cut], token[cut:]]


def _split_concat() -> Sample:
    token = "npm_" + rand(36)
    cut = _rng.randint(8, len(token) - 8)
    text = f'registry_auth = (\n    "{token[:cut]}"\n    "{token[cut:]}"\n)\n'
    return text, [token[:cut], token[cut:]]


def _zero_width() -> Sample:
    token = "ghp_" + rand(36)
    cut = [_rng.randint(3, len(token) - 3) for _ in range(2)]
    marked = token
    for pos in sorted(cut, reverse=True):
        marked = marked[:pos] + _rng.choice(["\u200b", "\u200d", "\u2060", "\ufeff"]) + marked[pos:]
    return f"paste this: {marked} into the CI settings", [token]


_add("base64_wrapped_token", "encoded", _b64_wrapped)
_add("base64_k8s_secret", "encoded", _b64_k8s_secret)
_add("url_encoded_assignment", "encoded", _url_encoded)
_add("url_encoded_token", "encoded", _url_encoded_token)
_add("json_unicode_escaped", "encoded", _json_escaped)
_add("split_backslash_newline", "encoded", _split_backslash)
_add("split_string_concatenation", "encoded", _split_concat)
_add("zero_width_inserted", "encoded", _zero_width)

# --- generic: random values under secret-looking names ---------------------------------------

_add(
    "generic_signing_key",
    "generic",
    _ctx(lambda v: f"webhook_signing_key: {v}\n", lambda: rand(32, B64)),
)
_add(
    "generic_session_secret",
    "generic",
    _ctx(lambda v: f"SESSION_SECRET={v}\n", lambda: rand(64, HEX)),
)
_add(
    "generic_auth_cookie",
    "generic",
    _ctx(lambda v: f"Set-Cookie: auth_session={v}; Path=/; HttpOnly", lambda: rand(40, B64URL)),
)
_add(
    "generic_credential_json",
    "generic",
    _ctx(lambda v: json.dumps({"serviceCredential": v}), lambda: rand(36)),
)
_add(
    "generic_encryption_key_b64",
    "generic",
    _ctx(lambda v: f"ENCRYPTION_KEY={v}", lambda: rand(43, B64) + "="),
)
_add(
    "generic_passwd_arg",
    "generic",
    _ctx(lambda v: f"./backup --passwd={v} --target s3://bucket", password),
)
_add(
    "generic_x_auth_token",
    "generic",
    _ctx(lambda v: f"X-Auth-Token: {v}\nAccept: */*", lambda: rand(40, HEX)),
)
_add("generic_hmac_salt", "generic", _ctx(lambda v: f"config.hmac_salt = '{v}'", lambda: rand(24)))
_add(
    "generic_private_token_header",
    "generic",
    _ctx(
        lambda v: f"curl --header 'PRIVATE-TOKEN: {v}' https://gitlab.example.com/api/v4/projects",
        lambda: rand(20, B64URL),
    ),
)
