"""Secrets the redactor recognises by their own shape: vendor tokens and key blocks.

Each entry is written from the format its vendor publishes (a fixed prefix, an alphabet, a
length, sometimes a checksum part), not copied from another scanner's rule file. A prefix
that is also an English word fragment ("key-", "pat", "sl.") is held to a stricter shape:
a fixed length, a boundary on both sides, or a check that the body looks random.

Every pattern starts with a literal, or with a boundary lookbehind and a literal, that the
prefilter in :mod:`fleetmem.core.redact` tests for before the pattern runs at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from fleetmem.core.redact_base import (
    B_CHARS,
    B,
    E,
    Rule,
    Span,
    has_digit,
    looks_random,
    regex_finder,
    rx,
)

# --- PEM and other armoured private key blocks ------------------------------------------------

# Anchored on the literal BEGIN with a fixed-width lookbehind for the dashes: a leading `-{2,}`
# would rescan a long run of dashes from every position. Covers every PEM kind that ends in
# PRIVATE KEY (RSA, EC, DSA, ENCRYPTED, OPENSSH, SSH2 ENCRYPTED) and PGP PRIVATE KEY BLOCK.
_PEM_BEGIN_RE = rx(r"(?:(?<=--)|(?<=--\x20))BEGIN[\x20A-Z0-9]{0,40}PRIVATE\x20KEY")
_PEM_END_RE = rx(r"END[\x20A-Z0-9]{0,40}PRIVATE\x20KEY(?:\x20BLOCK)?\x20?-{0,16}")


def _find_pem(text: str, lowered: str | None) -> Iterator[Span]:
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


# PuTTY .ppk files carry the private part as "Private-Lines: N" and N base64 lines, then a MAC.
_PUTTY_RE = rx(
    r"Private-Lines:[\x20\t]*[0-9]{1,3}[\x20\t]*\r?\n"
    r"(?P<s>(?:[A-Za-z0-9+/=]{1,128}+\r?\n){0,64}+(?:Private-MAC:[\x20\t]*[0-9a-fA-F]+)?)"
)

# --- vendor tokens -----------------------------------------------------------------------------

_Check = Callable[[str], bool] | None


def _token(
    name: str,
    triggers: tuple[str, ...],
    pattern: str,
    check: _Check = None,
    overlapping: bool = False,
    flags: int = 0,
) -> Rule:
    # A leading boundary either moves behind the token's literal prefix ("sk-" then "not after
    # a letter or digit"), so `re` still finds the prefix with its fast substring search and
    # a refused start costs one step; or, for a prefix that is a class or an alternation,
    # becomes a check after the match (those bodies cannot hold their own prefix, so a
    # refused attempt never rescans a run).
    left = ""
    if pattern.startswith(B):
        pattern, left = _behind_literal(pattern[len(B) :], B[4:-1])
    elif pattern.startswith(_LEFT_WORD):
        pattern, left = pattern[len(_LEFT_WORD) :], B_CHARS + "_-"
    finder = regex_finder(rx(pattern, flags), check=check, overlapping=overlapping, left=left)
    return Rule(name, triggers, finder)


def _headed_token(name: str, triggers: tuple[str, ...], pattern: str) -> Rule:
    """A token whose head is a class: ``pattern`` opens with the literal after the head and
    reads the head, group ``s``, in a lookbehind; the span runs from ``s`` to the match's end
    (see regex_finder's ``from_group``)."""
    return Rule(name, triggers, regex_finder(rx(pattern), from_group="s"))


_LITERAL_PREFIX = re.compile(r"(\(\?P<s>)?((?:[A-Za-z0-9_-]|\\\.)+)")


def _behind_literal(pattern: str, boundary_class: str) -> tuple[str, str]:
    """``pattern`` with its boundary put after its literal prefix, or with a ``left`` check."""
    found = _LITERAL_PREFIX.match(pattern)
    if found is None:
        return pattern, B_CHARS
    literal = found.group(2)
    following = pattern[found.end() : found.end() + 1]
    if following and following in "?*+{":
        literal = literal[:-1]  # the last character is quantified: not part of the literal
    if len(literal.replace("\\", "")) < 2:
        return pattern, B_CHARS
    head = pattern[: found.start(2)] + literal
    return head + f"(?<!{boundary_class}{literal})" + pattern[len(head) :], ""


# The boundary of tokens whose alphabet includes "_" and "-".
_LEFT_WORD = r"(?<![A-Za-z0-9_\]-])"
# The boundary stands after the prefix so `re` can search for the prefix's "A".
_AWS_ID = r"(?P<s>A(?:KIA|SIA|BIA|CCA)(?<![A-Z0-9\]]A[A-Z]{3})[A-Z0-9]{16})(?![A-Z0-9\[])"

TOKEN_RULES: tuple[Rule, ...] = (
    Rule("private_key_block", ("begin",), _find_pem),
    Rule("putty_private_key", ("private-lines:",), regex_finder(_PUTTY_RE)),
    # --- source hosts and CI
    _token("github_fine_grained_token", ("github_pat_",), r"(?P<s>github_pat_[A-Za-z0-9_]{22,})"),
    _token(
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"(?P<s>gh[pousr]_[A-Za-z0-9]{36,})",
        overlapping=True,
    ),
    _token(
        "gitlab_token",
        ("gl",),
        B + r"(?P<s>gl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|oas|ffct|agent|wt|rtr)-[A-Za-z0-9_-]{20,})",
    ),
    _token(
        "gitlab_runner_registration_token", ("gr1348941",), r"(?P<s>GR1348941[A-Za-z0-9_-]{20,})"
    ),
    _token(
        "atlassian_token",
        ("atatt3", "atctt3", "atbb", "atoa"),
        r"(?P<s>AT(?<![A-Za-z0-9\]]AT)(?:ATT3|CTT3|BB|OA)[A-Za-z0-9_=+/.-]{24,})",
    ),
    _token("circleci_token", ("ccipat_", "cciprj_"), r"(?P<s>CCIP(?:AT|RJ)_[A-Za-z0-9_]{30,})"),
    _token("buildkite_token", ("bkua_",), B + r"(?P<s>bkua_[a-f0-9]{40,})"),
    _token("sourcegraph_token", ("sgp_",), B + r"(?P<s>sgp_[A-Za-z0-9_]{40,})"),
    # --- cloud providers
    _token("aws_access_key_id", ("akia", "asia", "abia", "acca"), _AWS_ID),
    _token("alibaba_access_key_id", ("ltai",), B + r"(?P<s>LTAI[A-Za-z0-9]{12,24})" + E),
    _token("tencent_secret_id", ("akid",), B + r"(?P<s>AKID[A-Za-z0-9]{32,})" + E),
    _token("google_api_key", ("aiza",), B + r"(?P<s>AIza[A-Za-z0-9_-]{35,})"),
    _token("google_oauth_client_secret", ("gocspx-",), r"(?P<s>GOCSPX-[A-Za-z0-9_-]{20,})"),
    _token(
        "google_oauth_token", ("ya29.", "1//0"), B + r"(?P<s>(?:ya29\.|1//0)[A-Za-z0-9_-]{30,})"
    ),
    _token(
        "azure_ad_client_secret",
        ("q~",),
        r"(?P<s>[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,40})",
    ),
    _token("digitalocean_token", ("_v1_",), B + r"(?P<s>do[opr]_v1_[a-f0-9]{64})"),
    _token("heroku_token", ("hrku-",), B + r"(?P<s>HRKU-[A-Za-z0-9_-]{20,})"),
    _token("cloudflare_origin_ca_key", ("v1.0-",), B + r"(?P<s>v1\.0-[a-f0-9]{24}-[a-f0-9]{100,})"),
    _token(
        "terraform_cloud_token",
        (".atlasv1.",),
        r"(?P<s>[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{40,})",
    ),
    _token("pulumi_token", ("pul-",), B + r"(?P<s>pul-[a-f0-9]{40})" + E),
    _token("vault_token", ("hvs.", "hvb.", "hvr."), B + r"(?P<s>hv[sbr]\.[A-Za-z0-9_-]{20,})"),
    _token(
        "doppler_token",
        ("dp.",),
        B + r"(?P<s>dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_.-]{30,})",
    ),
    _token(
        "databricks_token",
        ("dapi", "dose"),
        B + r"(?P<s>(?:dapi|dose)[a-f0-9]{32}(?:-[0-9]{1,2})?)" + E,
    ),
    _token("onepassword_service_token", ("ops_ey",), B + r"(?P<s>ops_eyJ[A-Za-z0-9+/=_-]{40,})"),
    _token(
        "fly_token",
        ("fo1_", "fm1", "fm2"),
        r"(?P<s>f(?<![A-Za-z0-9\]]f)(?:o1_|m[12][ar]?_)[A-Za-z0-9+/=_-]{40,})",
    ),
    _token("netlify_token", ("nfp_", "nfc_"), B + r"(?P<s>nf[pc]_[A-Za-z0-9]{30,})"),
    _token(
        "supabase_token",
        ("sbp_", "sb_secret_"),
        r"(?P<s>sb(?<![A-Za-z0-9\]]sb)(?:p_|_secret_)[A-Za-z0-9_-]{30,})",
    ),
    _token(
        "planetscale_token", ("pscale_",), B + r"(?P<s>pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{30,})"
    ),
    # --- package registries
    _token("npm_token", ("npm_",), B + r"(?P<s>npm_[A-Za-z0-9]{36,})", overlapping=True),
    _token("pypi_token", ("pypi-",), B + r"(?P<s>pypi-[A-Za-z0-9_-]{50,})", looks_random),
    _token("rubygems_token", ("rubygems_",), B + r"(?P<s>rubygems_[a-f0-9]{48})" + E),
    _token("docker_hub_token", ("dckr_",), B + r"(?P<s>dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,})"),
    _token("nuget_api_key", ("oy2",), B + r"(?P<s>oy2[a-z0-9]{43})" + E),
    _token(
        "jfrog_token",
        ("akcp", "cmvmdgtu"),
        r"(?P<s>(?:AKCp(?<![A-Za-z0-9\]]AKCp)|cmVmdGtu(?<![A-Za-z0-9\]]cmVmdGtu))[A-Za-z0-9]{60,})",
    ),
    _token("clojars_token", ("clojars_",), B + r"(?P<s>CLOJARS_[a-z0-9]{40,})"),
    # --- SaaS APIs
    _token(
        "stripe_key",
        ("_live_", "_test_", "whsec_"),
        B + r"(?P<s>(?:(?:sk|rk)_(?:live|test)|whsec)_[A-Za-z0-9]{20,})",
        overlapping=True,
    ),
    _token("twilio_api_key", ("sk",), B + r"(?P<s>SK[0-9a-fA-F]{32})" + E),
    _token(
        "twilio_credentials",
        ("ac", "sk"),
        B + r"(?:AC|SK)[0-9a-fA-F]{32}:(?P<s>[A-Za-z0-9]{32})" + E,
    ),
    _token(
        "sendgrid_api_key",
        ("sg.",),
        B + r"(?P<s>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_\[-])",
    ),
    _token("mailgun_api_key", ("key-",), B + r"(?P<s>key-[0-9a-zA-Z]{32})" + E, has_digit),
    _headed_token(
        "mailgun_private_key",
        ("-",),
        r"-(?<=" + B + r"(?P<s>[0-9a-f]{32})-)[0-9a-f]{8}-[0-9a-f]{8}(?![A-Za-z0-9\[-])",
    ),
    _headed_token(
        "mailchimp_api_key", ("-us",), r"-us(?<=" + B + r"(?P<s>[0-9a-f]{32})-us)[0-9]{1,2}" + E
    ),
    _token("slack_token", ("xox", "xapp-"), r"(?P<s>(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,})"),
    _token(
        "slack_webhook_url",
        ("hooks.slack.com",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/+-]{20,})",
    ),
    _token(
        "discord_webhook_url",
        ("/api/webhooks/",),
        r"discord(?:app)?\.com/api/webhooks/(?P<s>[0-9]{5,24}/[A-Za-z0-9_-]{20,})",
    ),
    _token(
        "discord_bot_token",
        ("",),
        _LEFT_WORD + r"(?P<s>[MNO][A-Za-z0-9_-]{23,27}+\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})",
        has_digit,
    ),
    _token(
        "telegram_bot_token",
        (":aa",),
        _LEFT_WORD + r"(?P<s>[0-9]{5,12}+:AA[A-Za-z0-9_-]{30,})",
    ),
    _token(
        "shopify_token",
        ("shpat_", "shpss_", "shpca_", "shppa_"),
        B + r"(?P<s>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32,})",
    ),
    _token(
        "linear_api_key",
        ("lin_api_", "lin_oauth_"),
        B + r"(?P<s>lin_(?:api|oauth)_[A-Za-z0-9]{32,})",
    ),
    _token(
        "notion_token",
        ("secret_", "ntn_"),
        B + r"(?P<s>(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,}))" + E,
        looks_random,
    ),
    _token(
        "grafana_token",
        ("glsa_", "glc_"),
        r"(?P<s>gl(?<![A-Za-z0-9\]]gl)(?:sa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|c_[A-Za-z0-9+/=_-]{32,}))",
    ),
    _token("grafana_api_key", ("eyjrijoi",), B + r"(?P<s>eyJrIjoi[A-Za-z0-9+/=]{30,})"),
    _token("sentry_token", ("sntrys_", "sntryu_"), B + r"(?P<s>sntry[su]_[A-Za-z0-9+/=_-]{40,})"),
    _token("postman_api_key", ("pmak-",), B + r"(?P<s>PMAK-[a-f0-9]{24}-[a-f0-9]{34})"),
    _token(
        "newrelic_key", ("nrak-", "nrjs-", "nrii-"), B + r"(?P<s>NR(?:AK|JS|II)-[A-Za-z0-9]{20,})"
    ),
    _token("square_token", ("sq0atp-", "sq0csp-"), B + r"(?P<s>sq0(?:atp|csp)-[A-Za-z0-9_-]{22,})"),
    _token("mapbox_secret_token", ("sk.eyj",), B + r"(?P<s>sk\.eyJ[A-Za-z0-9_.-]{40,})"),
    _token("dropbox_token", ("sl.",), B + r"(?P<s>sl\.[A-Za-z0-9_-]{100,})"),
    _token("figma_token", ("figd_",), B + r"(?P<s>figd_[A-Za-z0-9_-]{30,})"),
    _token("airtable_token", ("pat",), B + r"(?P<s>pat[A-Za-z0-9]{14}\.[a-f0-9]{64})" + E),
    _token("contentful_token", ("cfpat-",), B + r"(?P<s>CFPAT-[A-Za-z0-9_-]{40,})"),
    _token("dynatrace_token", ("dt0c01.",), B + r"(?P<s>dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64})"),
    _token("typeform_token", ("tfp_",), B + r"(?P<s>tfp_[A-Za-z0-9_.-]{40,})"),
    _token("prefect_token", ("pnu_",), B + r"(?P<s>pnu_[A-Za-z0-9]{36})" + E),
    _token("readme_token", ("rdme_",), B + r"(?P<s>rdme_[a-z0-9]{60,})"),
    _token("duffel_token", ("duffel_",), B + r"(?P<s>duffel_(?:test|live)_[A-Za-z0-9_=-]{40,})"),
    _token("flutterwave_key", ("flwseck",), B + r"(?P<s>FLWSECK(?:_TEST)?-[a-f0-9]{32}-X)"),
    _token("easypost_key", ("ezak", "eztk"), B + r"(?P<s>EZ[AT]K[A-Za-z0-9]{50,})"),
    _token("adafruit_key", ("aio_",), B + r"(?P<s>aio_[A-Za-z0-9]{28})" + E, has_digit),
    _token("facebook_access_token", ("eaa",), B + r"(?P<s>EAA[A-Za-z0-9]{90,})"),
    # --- model vendors
    _token("anthropic_api_key", ("sk-ant-",), r"(?P<s>sk-ant-[A-Za-z0-9_-]{20,})"),
    # sk-proj-..., sk-svcacct-..., sk-admin-..., sk-or-v1-... and the legacy sk-<48> fit one run.
    _token("openai_api_key", ("sk-",), B + r"(?P<s>sk-(?!ant-)[A-Za-z0-9_-]{20,})", looks_random),
    _token(
        "huggingface_token",
        ("hf_", "api_org_"),
        B + r"(?P<s>(?:hf_|api_org_)[A-Za-z0-9]{30,})",
        looks_random,
        overlapping=True,
    ),
    _token("groq_api_key", ("gsk_",), B + r"(?P<s>gsk_[A-Za-z0-9]{40,})"),
    _token("xai_api_key", ("xai-",), B + r"(?P<s>xai-[A-Za-z0-9]{60,})"),
    _token("perplexity_api_key", ("pplx-",), B + r"(?P<s>pplx-[A-Za-z0-9]{40,})"),
    _token("replicate_token", ("r8_",), B + r"(?P<s>r8_[A-Za-z0-9]{30,})"),
    _token("langsmith_key", ("lsv2_",), B + r"(?P<s>lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})"),
    _token("tavily_api_key", ("tvly-",), B + r"(?P<s>tvly-[A-Za-z0-9_-]{20,})"),
    _token("fireworks_api_key", ("fw_",), B + r"(?P<s>fw_[A-Za-z0-9]{20,})", looks_random),
    # --- keys and tokens of no single vendor
    _token("age_secret_key", ("age-secret-key-1",), r"(?P<s>AGE-SECRET-KEY-1[0-9A-Z]{58})"),
    # header.payload.signature, or an unsigned header.payload (payload then starts eyJ too).
    # Possessive runs plus the left boundary keep "eyJeyJeyJ..." linear.
    _token(
        "jwt",
        ("eyj",),
        r"""(?P<s>eyJ(?<![A-Za-z0-9_\]-]eyJ)[A-Za-z0-9_-]{8,}+\.
          (?: eyJ[A-Za-z0-9_-]{4,}+ (?:\.[A-Za-z0-9_-]++)?
            | [A-Za-z0-9_-]{4,}+\.[A-Za-z0-9_-]{8,}+ ))""",
    ),
)

__all__ = ["TOKEN_RULES"]
