"""Test values: one realistic-looking secret of each format the redactor knows, in context.

The secrets are random characters in each format's shape (drawn from a fixed seed, so runs are
repeatable); none is a real credential. Unit and integration tests share them.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

_rng = random.Random(14)
UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64URL = ALNUM + "_-"


def pick(alphabet: str, count: int) -> str:
    """`count` random characters of `alphabet`, the last one a letter or digit (a word's end)."""
    body = [_rng.choice(alphabet) for _ in range(count - 1)]
    return "".join([*body, _rng.choice([c for c in alphabet if c.isalnum()])])


@dataclass(frozen=True, slots=True)
class Sample:
    """`secret` as it appears in `text`; `pattern` names the catalogue entry meant to find it.

    `exact`: the redactor masks exactly `secret` (else it may mask more of the text around it).
    """

    pattern: str
    text: str
    secret: str
    exact: bool = True

    @property
    def middle(self) -> str:
        """What no mask may show: the secret without the 6 + 4 characters a long mask keeps."""
        return self.secret[6:-4] if len(self.secret) >= 18 else self.secret


def _sample(pattern: str, before: str, secret: str, after: str = "", exact: bool = True) -> Sample:
    return Sample(pattern, f"{before}{secret}{after}", secret, exact)


_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI" + pick(B64URL, 40) + "." + pick(B64URL, 43)
)

SAMPLES: tuple[Sample, ...] = (
    _sample("json-field", '{"password": "', pick(ALNUM, 24), '"}'),
    _sample("cli-flag", "deploy --token ", pick(ALNUM, 30), " --verbose"),
    _sample("authorization-header", "Authorization: Basic ", pick(ALNUM, 28) + "==", "\n"),
    _sample("bearer", "curl -H 'X-Auth: Bearer ", pick(ALNUM, 40), "'"),
    _sample("sk-dash", "OpenAI key is ", "sk-proj-" + pick(B64URL, 48), "."),
    _sample("sk-dash", "claude: ", "sk-ant-api03-" + pick(B64URL, 80), " ok"),
    _sample("github", "remote uses ", "ghs_" + pick(ALNUM, 36), " now"),
    _sample("github", "oauth ", "gho_" + pick(ALNUM, 36)),
    _sample("github-fine-grained", "pat ", "github_pat_" + pick(ALNUM, 22) + "_" + pick(ALNUM, 59)),
    _sample("slack", "bot ", "xoxb-" + pick(DIGITS, 12) + "-" + pick(DIGITS, 13) + "-" + pick(ALNUM, 24)),
    _sample("slack", "refresh ", "xoxe-1-" + pick(UPPER + DIGITS, 146)),
    _sample("slack-app", "app ", "xapp-1-A0" + pick(UPPER + DIGITS, 9) + "-" + pick(DIGITS, 13) + "-" + pick(HEX, 64)),
    _sample("groq", "groq ", "gsk_" + pick(ALNUM, 52)),
    _sample("google-api-key", "maps ", "AIza" + pick(B64URL, 35)),
    _sample("perplexity", "pplx ", "pplx-" + pick(ALNUM, 48)),
    _sample("npm", "//registry.npmjs.org/:_authToken ", "npm_" + pick(ALNUM, 36)),
    _sample("telegram-bot-url", "https://api.telegram.org/bot", "7" + pick(DIGITS, 9) + ":AA" + pick(B64URL, 33), "/getMe"),
    _sample("telegram-bot-token", "the bot token is ", "6" + pick(DIGITS, 9) + ":AA" + pick(B64URL, 33)),
    _sample("aws-access-key-id", "aws_access_key_id ", "AKIA" + pick(UPPER + "234567", 16)),
    _sample("aws-access-key-id", "session key ", "ASIA" + pick(UPPER + "234567", 16), ","),
    _sample("stripe", "charge with ", "sk_live_" + pick(ALNUM, 24)),
    _sample("stripe", "restricted ", "rk_test_" + pick(ALNUM, 99)),
    _sample("stripe-webhook-secret", "endpoint secret ", "whsec_" + pick(ALNUM, 32)),
    _sample("jwt", "session cookie ", _JWT, ";"),
    _sample("discord-bot-token", "client.run('", "MTk4" + pick(B64URL, 20) + "." + pick(B64URL, 6) + "." + pick(B64URL, 38), "')"),
    _sample("discord-webhook", "https://discord.com/api/webhooks/1234567890123456789/", pick(B64URL, 68)),
    _sample("url-password", "DATABASE_URL is postgres://app:", pick(ALNUM, 20), "@db.internal:5432/prod"),
    _sample("url-password", "mongodb+srv://admin:", "p@ss-" + pick(ALNUM, 12), "@cluster0.example.net/?retryWrites=true"),
    _sample("url-password", "broker amqps://svc:", pick(ALNUM, 24), "@mq.example.org/vhost"),
    _sample("url-password", "cache rediss://:", pick(ALNUM, 32), "@cache.example.org:6380/0"),
    _sample("gitlab", "git clone https://oauth2:", "glpat-" + pick(B64URL, 20), "@gitlab.com/g/p.git"),
    _sample("gitlab", "deploy token ", "gldt-" + pick(B64URL, 20)),
    _sample("gitlab-runner-registration", "register with ", "GR1348941" + pick(B64URL, 20)),
    _sample("hugging-face", "HF ", "hf_" + pick(UPPER + LOWER, 34)),
    _sample("hugging-face-org", "org ", "api_org_" + pick(UPPER + LOWER, 34)),
    _sample("slack-webhook", "https://hooks.slack.com/services/", "T0" + pick(UPPER + DIGITS, 8) + "/B0" + pick(UPPER + DIGITS, 8) + "/" + pick(ALNUM, 24)),
    _sample("sendgrid", "mail ", "SG." + pick(B64URL, 22) + "." + pick(B64URL, 43)),
    _sample("google-oauth-client-secret", "client secret ", "GOCSPX-" + pick(B64URL, 28)),
    _sample("google-oauth-access-token", "access ", "ya29." + pick(B64URL, 120)),
    _sample("twilio", "api key sid ", "SK" + pick(HEX, 32)),
    _sample("twilio", "account ", "AC" + pick(HEX, 32)),
    _sample("pypi", "upload ", "pypi-AgEIcHlwaS5vcmc" + pick(B64URL, 60)),
    _sample("shopify", "shop ", "shpat_" + pick(HEX, 32)),
    _sample("digitalocean", "do ", "dop_v1_" + pick(HEX, 64)),
    _sample("azure-account-key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=", pick(ALNUM + "+/", 86) + "==", ";EndpointSuffix=core.windows.net", exact=False),
    _sample("azure-shared-access-key", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=", pick(ALNUM + "+/", 43) + "="),
    _sample("azure-sas-signature", "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sr=b&sp=r&sig=", pick(ALNUM, 40) + "%3D"),
    _sample("azure-ad-client-secret", "AZURE_CLIENT ", pick(ALNUM, 3) + "8Q~" + pick(ALNUM + "_~.-", 34)),
    _sample("mailgun", "mailgun ", "key-" + pick(HEX, 32)),
    _sample("mailchimp", "mailchimp ", pick(HEX, 32) + "-us21"),
    _sample("square-oauth", "square ", "sq0csp-" + pick(B64URL, 43)),
    _sample("square-access-token", "square ", "EAAA" + pick(B64URL, 60)),
    _sample("facebook-access-token", "graph ", "EAAG" + pick(ALNUM, 150)),
    _sample("atlassian-api-token", "jira ", "ATATT3xFfGF0" + pick(B64URL, 170) + "=" + pick(UPPER[:6] + DIGITS, 8)),
    _sample("postman", "postman ", "PMAK-" + pick(HEX, 24) + "-" + pick(HEX, 34)),
    _sample("databricks", "databricks ", "dapi" + pick(HEX, 32)),
    _sample("vault", "VAULT ", "hvs." + pick(B64URL, 90)),
    _sample("terraform", "credentials ", pick(ALNUM, 14) + ".atlasv1." + pick(B64URL, 67)),
    _sample("linear", "linear ", "lin_api_" + pick(ALNUM, 40)),
    _sample("grafana-cloud", "grafana ", "glc_" + pick(ALNUM, 60)),
    _sample("grafana-service-account", "grafana ", "glsa_" + pick(ALNUM, 32) + "_" + pick(HEX, 8)),
    _sample("age", "age ", "AGE-SECRET-KEY-1" + pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    # Issue #32 probes: any body after the prefix, lower case, post-quantum and plugin keys.
    _sample("age", "# created: 2026-12-01\n", "AGE-SECRET-KEY-1" + pick(UPPER + DIGITS, 40), "\n"),
    _sample("age", "key=", "age-secret-key-1" + pick("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58)),
    _sample("age", "pq ", "AGE-SECRET-KEY-PQ-1" + pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    _sample("age", "tpm ", "AGE-PLUGIN-TPM-1" + pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 70)),
    _sample("notion", "notion ", "ntn_" + pick(ALNUM, 46)),
    _sample("notion-legacy", "notion ", "secret_" + pick(ALNUM, 43)),
    _sample("replicate", "replicate ", "r8_" + pick(ALNUM, 37)),
    _sample("supabase", "supabase ", "sbp_" + pick(HEX, 40)),
    _sample("new-relic", "new relic ", "NRAK-" + pick(UPPER + DIGITS, 27)),
    _sample("sentry", "sentry ", "sntryu_" + pick(HEX, 64)),
    _sample("1password-service-account", "op ", "ops_eyJ" + pick(ALNUM + "+/", 260)),
    _sample("mapbox", "mapbox ", "sk.eyJ1Ijoi" + pick(B64URL, 60) + "." + pick(B64URL, 22)),
    _sample("xai", "grok ", "xai-" + pick(ALNUM, 80)),
    _sample("doppler", "doppler ", "dp.pt." + pick(ALNUM, 43)),
    _sample("pulumi", "pulumi ", "pul-" + pick(HEX, 40)),
    _sample("dropbox", "dropbox ", "sl." + pick(B64URL, 140)),
)  # fmt: skip

PEM_BODY = pick(ALNUM, 64)
# Several lines of key material: a mask that dropped lines would move every line after it.
PEM_TEXT = "\n".join(
    [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        PEM_BODY,
        *(pick(ALNUM, 64) for _ in range(4)),
        "-----END OPENSSH PRIVATE KEY-----",
    ]
)
