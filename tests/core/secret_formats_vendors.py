"""Vendor token formats of the secret corpus: cloud, source hosts and CI, registries, SaaS
and model APIs. Importing this module registers them with :mod:`tests.core.secret_corpus`."""

from __future__ import annotations

import base64
import json
import urllib.parse

from tests.core.secret_corpus import (
    ALNUM,
    B64,
    B64URL,
    DIGITS,
    HEX,
    LOWER,
    UPPER,
    Sample,
    _add,
    _ctx,
    _rng,
    _tok,
    b64,
    password,
    pem,
    prefixed,
    rand,
    user,
)

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
    _tok(f"digitalocean_{_p}", "cloud", prefixed(f"{_p}_v1_", 64, HEX))
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
    _tok(f"github_{_p}", "source", prefixed(f"{_p}_", 36))
_tok("github_fine_grained", "source", lambda: "github_pat_" + rand(22) + "_" + rand(59))
for _p in ("glpat", "glrt", "gldt"):
    _tok(f"gitlab_{_p}", "source", prefixed(f"{_p}-", 20, B64URL))
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
    _tok(f"shopify_{_p}", "saas", prefixed(f"{_p}_", 32, HEX))
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
