"""A generated corpus of realistic secrets, fresh random values on every call.

Each :class:`SecretFormat` makes one kind of secret the way it appears in the wild: a vendor
token in a log line or a JSON body, a password in a DSN, a key in a YAML block scalar, a
token base64-wrapped or split across lines. Values come from :class:`random.SystemRandom`
(never a fixed seed, never a real key), shaped after each vendor's published format: prefix,
alphabet, length. Token formats are placed into a randomly chosen surrounding text (log line,
shell command, JSON, YAML, Python, Markdown) whose own words name no secret, so the token's
shape alone has to give it away; context formats bring their own surroundings.

The list is deliberately broader than the redactor's named rules: several formats (Mistral,
Cohere, Datadog, Okta, Cloudflare tokens, a session secret, a token as URL user) have no rule
of their own and must be caught by the generic ones.
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

_rng = random.SystemRandom()

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


def rand(k: int, alphabet: str = ALNUM) -> str:
    """``k`` random characters; mixed-alphabet values hold a digit and both cases, as real
    keys of that alphabet practically always do."""
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(k))
        checks = [(DIGITS, 1), (LOWER, 1), (UPPER, 1)]
        if k < 12 or all(
            any(c in group for c in value) or not any(c in group for c in alphabet)
            for group, _ in checks
        ):
            return value


def password(k: int = 0) -> str:
    """A human-chosen-looking but random password: letters, digits and a few symbols."""
    k = k or _rng.randint(10, 20)
    return rand(k - 2, ALNUM) + _rng.choice("!#%^*") + _rng.choice(DIGITS)


def user() -> str:
    return _rng.choice(["app", "deploy", "svc_ci", "admin", "backup", "ana", "bob"]) + str(
        _rng.randint(1, 99)
    )


def host() -> str:
    return (
        _rng.choice(["db", "cache", "mq", "api", "git"]) + f"-{_rng.randint(1, 9)}.internal.example"
    )


def b64(data: str) -> str:
    return base64.b64encode(data.encode()).decode()


def pem(kind: str, lines: int = 6) -> tuple[str, list[str]]:
    body = [rand(64, B64) for _ in range(lines)] + [rand(_rng.randint(8, 60), B64) + "=="]
    return f"-----BEGIN {kind}-----\n" + "\n".join(body) + f"\n-----END {kind}-----", body


# A sample: the text to redact, and the substrings (secret values, as they are written in the
# text: encoded, escaped or in pieces) that must not survive.
Sample = tuple[str, list[str]]


@dataclass(frozen=True)
class SecretFormat:
    """One kind of secret: its family, and a maker of fresh samples."""

    name: str
    family: str
    make: Callable[[], Sample]


# --- surroundings for a bare token ----------------------------------------------------------

_CONTEXTS: tuple[Callable[[str], str], ...] = (
    lambda t: (
        f"2026-12-01T18:02:{_rng.randint(10, 59)}Z INFO worker[{_rng.randint(100, 999)}]: "
        f"retrying upload with {t} after HTTP 503"
    ),
    lambda t: f"$ deployctl push --target prod --with {t} ./dist",
    lambda t: json.dumps({"event": "ci.step", "data": {"value": t}, "attempt": 3}),
    lambda t: f"steps:\n  - run: publish\n    with: {t}\n  - run: notify\n",
    lambda t: f"Rotated it today; the new one is `{t}` (the old one is revoked).",
    lambda t: f'client = Client("{t}", timeout=30)\nclient.ping()',
    lambda t: f"[2026-12-01 18:02:11,402] DEBUG request headers sent with {t}; status=200",
)


def _token(make: Callable[[], str]) -> Callable[[], Sample]:
    def sample() -> Sample:
        token = make()
        return _rng.choice(_CONTEXTS)(token), [token]

    return sample


def _ctx(make: Callable[[str], str], value: Callable[[], str]) -> Callable[[], Sample]:
    def sample() -> Sample:
        secret = value()
        return make(secret), [secret]

    return sample


FORMATS: list[SecretFormat] = []


def _add(name: str, family: str, make: Callable[[], Sample]) -> None:
    FORMATS.append(SecretFormat(name, family, make))


def _tok(name: str, family: str, make: Callable[[], str]) -> None:
    _add(name, family, _token(make))


# --- cloud providers ------------------------------------------------------------------------

_tok("aws_access_key_id", "cloud", lambda: "AKIA" + rand(16, UPPER + DIGITS))
_tok("aws_sts_key_id", "cloud", lambda: "ASIA" + rand(16, UPPER + DIGITS))


def _aws_credentials_file() -> Sample:
    key_id, secret = "AKIA" + rand(16, UPPER + DIGITS), rand(40, B64)
    text = (
        f"[profile-{user()}]\naws_access_key_id = {key_id}\n"
        f"aws_secret_access_key = {secret}\nregion = eu-west-1\n"
    )
    return text, [key_id, secret]


_add("aws_credentials_file", "cloud", _aws_credentials_file)


def _gcp_service_account() -> Sample:
    key_id = rand(40, HEX)
    block, body = pem("PRIVATE KEY", 8)
    doc = {
        "type": "service_account",
        "project_id": f"proj-{_rng.randint(1000, 9999)}",
        "private_key_id": key_id,
        "private_key": block + "\n",
        "client_email": f"ci@proj-{_rng.randint(1000, 9999)}.iam.gserviceaccount.com",
        "client_id": str(_rng.randint(10**20, 10**21)),
    }
    return json.dumps(doc, indent=2), [key_id, *body]


_add("gcp_service_account_json", "cloud", _gcp_service_account)
_tok("gcp_api_key", "cloud", lambda: "AIza" + rand(35, B64URL))
_tok("gcp_oauth_client_secret", "cloud", lambda: "GOCSPX-" + rand(28, B64URL))
_tok("gcp_oauth_access_token", "cloud", lambda: "ya29." + rand(_rng.randint(80, 160), B64URL))


def _azure_connection_string() -> Sample:
    key = rand(86, B64) + "=="
    text = (
        f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acct"
        f"{_rng.randint(10, 99)};AccountKey={key};EndpointSuffix=core.windows.net"
    )
    return text, [key]


_add("azure_storage_connection_string", "cloud", _azure_connection_string)


def _azure_sas_url() -> Sample:
    sig = urllib.parse.quote(rand(43, B64) + "=", safe="")
    url = (
        f"https://acct{_rng.randint(1, 99)}.blob.core.windows.net/backups/db.tar?sv=2022-11-02"
        f"&ss=b&srt=co&sp=rl&se=2026-12-31T00:00:00Z&spr=https&sig={sig}"
    )
    return f"curl -fsSL '{url}' -o db.tar", [sig]


_add("azure_sas_url", "cloud", _azure_sas_url)
_tok(
    "azure_ad_client_secret",
    "cloud",
    lambda: rand(3, ALNUM) + _rng.choice(DIGITS) + "Q~" + rand(34, ALNUM + "_~.-"),
)
for _p in ("dop", "doo", "dor"):
    _tok(f"digitalocean_{_p}", "cloud", lambda p=_p: f"{p}_v1_" + rand(64, HEX))
_tok("heroku_api_key", "cloud", lambda: "HRKU-AA" + rand(58, B64URL))
_add(
    "heroku_legacy_key_env",
    "cloud",
    _ctx(
        lambda v: f"export HEROKU_API_KEY={v}\nheroku ps -a shop",
        lambda: (
            rand(8, HEX)
            + "-"
            + rand(4, HEX)
            + "-4"
            + rand(3, HEX)
            + "-a"
            + rand(3, HEX)
            + "-"
            + rand(12, HEX)
        ),
    ),
)
_add(
    "cloudflare_api_token_env",
    "cloud",
    _ctx(lambda v: f"CLOUDFLARE_API_TOKEN={v} wrangler deploy", lambda: rand(40, B64URL)),
)
_add(
    "cloudflare_global_key_header",
    "cloud",
    _ctx(
        lambda v: (
            'curl -X GET "https://api.cloudflare.com/client/v4/zones" '
            f'-H "X-Auth-Email: ops@example.com" -H "X-Auth-Key: {v}"'
        ),
        lambda: rand(37, HEX),
    ),
)

# --- source hosts and CI ----------------------------------------------------------------------

for _p in ("ghp", "gho", "ghs", "ghu"):
    _tok(f"github_{_p}", "source", lambda p=_p: f"{p}_" + rand(36))
_tok("github_fine_grained", "source", lambda: "github_pat_" + rand(22) + "_" + rand(59))
for _p in ("glpat", "glrt", "gldt"):
    _tok(f"gitlab_{_p}", "source", lambda p=_p: f"{p}-" + rand(20, B64URL))
_tok("gitlab_runner_registration", "source", lambda: "GR1348941" + rand(20, B64URL))
_tok("bitbucket_app_password", "source", lambda: "ATBB" + rand(32))
_tok(
    "atlassian_api_token",
    "source",
    lambda: "ATATT3xFfGF0" + rand(170, B64URL) + "=" + rand(8, HEX.upper()),
)
_tok("circleci_personal_token", "source", lambda: "CCIPAT_" + rand(22) + "_" + rand(40, HEX))

# --- package registries -----------------------------------------------------------------------

_tok("npm_token", "registry", lambda: "npm_" + rand(36))
_add(
    "npmrc_auth_token",
    "registry",
    _ctx(
        lambda v: f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={v}\n",
        lambda: (
            rand(8, HEX)
            + "-"
            + rand(4, HEX)
            + "-"
            + rand(4, HEX)
            + "-"
            + rand(4, HEX)
            + "-"
            + rand(12, HEX)
        ),
    ),
)
_tok("pypi_token", "registry", lambda: "pypi-AgEIcHlwaS5vcmc" + rand(_rng.randint(60, 140), B64URL))
_add(
    "pypirc_password",
    "registry",
    _ctx(
        lambda v: (
            f"[distutils]\nindex-servers = internal\n\n[internal]\n"
            f"repository = https://pkgs.example.com/simple\nusername = {user()}\npassword = {v}\n"
        ),
        password,
    ),
)
_tok("rubygems_api_key", "registry", lambda: "rubygems_" + rand(48, HEX))


def _docker_config() -> Sample:
    secret = password()
    auth = b64(f"{user()}:{secret}")
    doc = {"auths": {"registry.example.com": {"auth": auth}}, "credsStore": ""}
    return json.dumps(doc, indent=_rng.choice([None, 2])), [auth]


_add("docker_config_auth", "registry", _docker_config)
_tok("docker_hub_pat", "registry", lambda: "dckr_pat_" + rand(27, B64URL))

# --- SaaS APIs --------------------------------------------------------------------------------

_tok("stripe_secret_key", "saas", lambda: "sk_live_" + rand(_rng.choice([24, 99])))
_tok("stripe_restricted_key", "saas", lambda: "rk_live_" + rand(_rng.choice([24, 99])))
_tok("stripe_webhook_secret", "saas", lambda: "whsec_" + rand(32))


def _twilio_pair() -> Sample:
    sid, secret = "SK" + rand(32, HEX), rand(32)
    text = f"TWILIO_API_KEY={sid}\nTWILIO_API_SECRET={secret}\nTWILIO_REGION=ie1\n"
    return text, [sid, secret]


def _twilio_basic() -> Sample:
    account, token = "AC" + rand(32, HEX), rand(32, HEX)
    text = (
        f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/{account}/Messages.json "
        f"--data-urlencode 'Body=hi' -u {account}:{token}"
    )
    return text, [token]


_add("twilio_api_key_pair", "saas", _twilio_pair)
_add("twilio_account_auth", "saas", _twilio_basic)
_tok("sendgrid_api_key", "saas", lambda: "SG." + rand(22, B64URL) + "." + rand(43, B64URL))
_tok("mailgun_legacy_key", "saas", lambda: "key-" + rand(32, HEX))
_tok("mailgun_private_key", "saas", lambda: rand(32, HEX) + "-" + rand(8, HEX) + "-" + rand(8, HEX))
_tok(
    "slack_bot_token",
    "saas",
    lambda: f"xoxb-{rand(12, DIGITS)}-{rand(13, DIGITS)}-{rand(24)}",
)
_tok(
    "slack_user_token",
    "saas",
    lambda: f"xoxp-{rand(12, DIGITS)}-{rand(12, DIGITS)}-{rand(13, DIGITS)}-{rand(32, HEX)}",
)
_tok(
    "slack_webhook",
    "saas",
    lambda: (
        "https://hooks.slack.com/services/"
        f"T{rand(10, UPPER + DIGITS)}/B{rand(10, UPPER + DIGITS)}/{rand(24)}"
    ),
)


def _discord_bot() -> str:
    ident = str(_rng.randint(10**17, 10**19 - 1))
    head = base64.b64encode(ident.encode()).decode().rstrip("=")
    return f"{head}.{rand(6, B64URL)}.{rand(38, B64URL)}"


_tok("discord_bot_token", "saas", _discord_bot)
_tok(
    "discord_webhook",
    "saas",
    lambda: f"https://discord.com/api/webhooks/{_rng.randint(10**17, 10**19)}/{rand(68, B64URL)}",
)
_tok("telegram_bot_token", "saas", lambda: f"{_rng.randint(10**8, 10**10)}:AA{rand(33, B64URL)}")
for _p in ("shpat", "shpss", "shpca"):
    _tok(f"shopify_{_p}", "saas", lambda p=_p: f"{p}_" + rand(32, HEX))
_tok("linear_api_key", "saas", lambda: "lin_api_" + rand(40))
_tok("notion_secret", "saas", lambda: "secret_" + rand(43))
_tok("notion_ntn", "saas", lambda: "ntn_" + rand(11, DIGITS) + rand(35))
_tok("grafana_service_account", "saas", lambda: "glsa_" + rand(32) + "_" + rand(8, HEX))
_tok(
    "grafana_cloud_token",
    "saas",
    lambda: (
        "glc_"
        + b64(
            json.dumps({"o": rand(6, DIGITS), "n": "stack-" + rand(8, HEX), "k": rand(24)})
        ).rstrip("=")
    ),
)
_tok("databricks_token", "saas", lambda: "dapi" + rand(32, HEX) + _rng.choice(["", "-2"]))
_tok("doppler_personal_token", "saas", lambda: "dp.pt." + rand(43))
_tok("doppler_service_token", "saas", lambda: "dp.st.prd." + rand(43))
_tok("vault_service_token", "saas", lambda: "hvs." + rand(_rng.choice([24, 91]), B64URL))
_tok("vault_batch_token", "saas", lambda: "hvb." + rand(138, B64URL))
_tok("postman_api_key", "saas", lambda: "PMAK-" + rand(24, HEX) + "-" + rand(34, HEX))
_tok("newrelic_user_key", "saas", lambda: "NRAK-" + rand(27, UPPER + DIGITS))
_tok("supabase_token", "saas", lambda: "sbp_" + rand(40, HEX))
_tok("square_access_token", "saas", lambda: "sq0atp-" + rand(22, B64URL))
_tok(
    "sentry_org_token",
    "saas",
    lambda: (
        "sntrys_"
        + b64(
            json.dumps(
                {"iat": _rng.randint(10**9, 2 * 10**9), "url": "https://sentry.io", "org": "acme"}
            )
        ).rstrip("=")
        + "_"
        + rand(43, B64)
    ),
)
_tok("terraform_cloud_token", "saas", lambda: rand(14) + ".atlasv1." + rand(67, B64URL))
_tok("pulumi_access_token", "saas", lambda: "pul-" + rand(40, HEX))
_add(
    "datadog_api_key_env",
    "saas",
    _ctx(lambda v: f"DD_API_KEY={v} DD_SITE=datadoghq.eu datadog-agent run", lambda: rand(32, HEX)),
)
_add(
    "okta_api_token_yaml",
    "saas",
    _ctx(
        lambda v: f"okta:\n  org_url: https://acme.okta.com\n  api_token: {v}\n",
        lambda: "00" + rand(40, B64URL),
    ),
)

# --- model vendors ----------------------------------------------------------------------------

_tok("huggingface_token", "model", lambda: "hf_" + rand(34, LOWER + UPPER))
_tok("openai_project_key", "model", lambda: "sk-proj-" + rand(_rng.choice([48, 156]), B64URL))
_tok("openai_legacy_key", "model", lambda: "sk-" + rand(48))
_tok("anthropic_api_key", "model", lambda: "sk-ant-api03-" + rand(93, B64URL) + "AA")
_tok("groq_api_key", "model", lambda: "gsk_" + rand(52))
_tok("xai_api_key", "model", lambda: "xai-" + rand(80))
_tok("perplexity_api_key", "model", lambda: "pplx-" + rand(48))
_tok("replicate_token", "model", lambda: "r8_" + rand(37))
_add(
    "mistral_api_key_env",
    "model",
    _ctx(lambda v: f"MISTRAL_API_KEY={v} python chat.py", lambda: rand(32)),
)
_add(
    "cohere_api_key_python",
    "model",
    _ctx(lambda v: f'import cohere\nco = cohere.ClientV2(api_key="{v}")', lambda: rand(40)),
)
_add(
    "together_api_key_json",
    "model",
    _ctx(lambda v: json.dumps({"provider": "together", "apiKey": v}), lambda: rand(64, HEX)),
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


def formats() -> list[SecretFormat]:
    """Every format, in definition order."""
    return list(FORMATS)


def families() -> dict[str, list[str]]:
    """Format names by family."""
    out: dict[str, list[str]] = {}
    for fmt in FORMATS:
        out.setdefault(fmt.family, []).append(fmt.name)
    return out
