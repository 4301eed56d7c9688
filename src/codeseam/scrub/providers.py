"""Provider token rules, as data: one row per documented token format.

Each row is ``id, kind, regex`` plus options. The regex starts with the token's literal
prefix (``glpat-``, ``npm_``, ``SG.``): the engine finds every prefix in one Aho-Corasick
pass and tries the regex only where a prefix is (``anchored``). Formats whose fixed part is
not at the start give ``back`` (what must end right before the literal: the 32 hex digits of
a Mailchimp key before ``-us21``) or ``needs`` (context words; the regex then runs over the
whole text). ``group`` names the redacted part when the regex holds context
(``AccountKey=...``). Every token also has to look drawn at random past its prefix
(``shapes.random_body``) and must not be a placeholder or a documented example.

The formats are the providers' documented ones, cross-checked against the public rule sets
of gitleaks/betterleaks 2.0 and kingfisher 2.14 (see bench/results/scrub.md).
"""

from __future__ import annotations

from dataclasses import dataclass

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_B64 = r"[A-Za-z0-9+/]"


@dataclass(frozen=True)
class P:
    id: str
    kind: str
    regex: str
    anchors: tuple[str, ...] = ()  # literals the match starts with (default: the regex's prefix)
    needs: tuple[str, ...] = ()  # context literals instead (the regex runs over the whole text)
    group: str | None = None
    back: str | None = None
    back_max: int = 0
    classes: int | None = None  # character classes the random part needs (3 for mixed-case alphabets)
    right: bool = True
    body: int | None = None  # where the random part starts (default: after the literal prefix)
    b64_left: bool = False  # not right after "+", "/" or "=" either (a long run inside base64 data)
    left: str | None = None  # the character before the match must be one of these
    back_fixed: bool = True  # ``back`` is exactly ``back_max`` characters long


PROVIDERS: tuple[P, ...] = (
    # -- VCS and CI ----------------------------------------------------------------------------
    P("github-pat", "github-token", r"ghp_[A-Za-z0-9]{36,251}"),
    P("github-oauth", "github-token", r"gho_[A-Za-z0-9]{36,251}"),
    P("github-user-to-server", "github-token", r"ghu_[A-Za-z0-9]{36,251}"),
    P("github-server-to-server", "github-token", r"ghs_[A-Za-z0-9]{36,251}"),
    P("github-refresh", "github-token", r"ghr_[A-Za-z0-9]{36,251}"),
    P("github-fine-grained-pat", "github-token", r"github_pat_[A-Za-z0-9_]{50,251}"),
    P("gitlab-pat", "gitlab-token", r"glpat-[A-Za-z0-9_-]{20,300}(?:\.[0-9a-z]{2}\.?[0-9a-z]{7,9})?"),
    P("gitlab-deploy-token", "gitlab-token", r"gldt-[A-Za-z0-9_-]{20,300}"),
    P("gitlab-runner-token", "gitlab-token", r"glrt-[A-Za-z0-9_-]{20,300}(?:\.[0-9a-z]{2}\.?[0-9a-z]{7,9})?"),
    P("gitlab-runner-registration", "gitlab-token", r"GR1348941[A-Za-z0-9_-]{20,300}"),
    P("gitlab-trigger-token", "gitlab-token", r"glptt-[0-9a-f]{40}"),
    P("gitlab-ci-job-token", "gitlab-token", r"glcbt-[0-9a-zA-Z]{1,5}_[A-Za-z0-9_-]{20,1024}"),
    P("gitlab-feed-token", "gitlab-token", r"glft-[A-Za-z0-9_-]{20,1024}"),
    P("gitlab-mail-token", "gitlab-token", r"glimt-[A-Za-z0-9_-]{25,1024}"),
    P("gitlab-agent-token", "gitlab-token", r"glagent-[A-Za-z0-9_-]{50,1024}"),
    P("gitlab-oauth-secret", "gitlab-token", r"gloas-[A-Za-z0-9_-]{64,1024}"),
    P("gitlab-scim-token", "gitlab-token", r"glsoat-[A-Za-z0-9_-]{20,1024}"),
    P("gitlab-feature-flag-token", "gitlab-token", r"glffct-[A-Za-z0-9_-]{20,1024}"),
    P("gitlab-session-cookie", "gitlab-token", r"_gitlab_session=(?P<t>[0-9a-z]{32})", group="t"),
    P("bitbucket-app-password", "bitbucket-token", r"ATBB[A-Za-z0-9_=.-]{28,1024}"),
    P("bitbucket-repository-token", "bitbucket-token", r"ATCTT3xFfGN0[A-Za-z0-9_=-]{100,4096}"),
    P("bitbucket-data-center-token", "bitbucket-token", r"BBDC-[A-Za-z0-9+/=]{32,1024}"),
    P("atlassian-api-token", "atlassian-token", r"ATATT3[A-Za-z0-9_=-]{100,4096}"),
    P("circleci-personal-token", "circleci-token", r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}"),
    P("circleci-project-token", "circleci-token", r"CCIPRJ_[A-Za-z0-9]{22}_[a-f0-9]{40}"),
    P("buildkite-token", "buildkite-token", r"bkua_[a-f0-9]{40}"),
    P("sourcegraph-token", "sourcegraph-token", r"sgp_(?:[a-f0-9]{16}_|local_)?[A-Za-z0-9]{40,64}", classes=2),
    P("sonar-token", "sonar-token", r"sq[pua]_[a-f0-9]{40}", anchors=("sqp_", "squ_", "sqa_")),
    P("docker-swarm-join-token", "docker-token", r"SWMTKN-1-[a-z0-9]{50,60}-[a-z0-9]{24,30}"),
    P("docker-swarm-unlock-key", "docker-token", r"SWMKEY-1-[A-Za-z0-9+/]{40,50}"),
    # -- package registries --------------------------------------------------------------------
    P("npm-token", "npm-token", r"npm_[A-Za-z0-9]{36}"),
    P("pypi-token", "pypi-token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1024}"),
    P("testpypi-token", "pypi-token", r"pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9_-]{50,1024}"),
    P("rubygems-token", "rubygems-token", r"rubygems_[a-f0-9]{48}"),
    P("nuget-key", "nuget-key", r"oy2[a-z0-9]{43}"),
    P("dockerhub-pat", "dockerhub-token", r"dckr_pat_[A-Za-z0-9_-]{27,1024}"),
    P("dockerhub-oat", "dockerhub-token", r"dckr_oat_[A-Za-z0-9_-]{32,1024}"),
    P("crates-token", "crates-token", r"cio[A-Za-z0-9]{32}"),
    P("jfrog-api-key", "jfrog-token", r"AKCp[A-Za-z0-9]{69}", b64_left=True),
    P("jfrog-reference-token", "jfrog-token", r"cmVmdGtuOjAxOj[A-Za-z0-9]{40,1024}", b64_left=True),
    P("clojars-token", "clojars-token", r"CLOJARS_[a-z0-9]{60}"),
    P("packagist-token", "packagist-token", r"packagist_(?:ort|out|acs|ack)_[a-f0-9]{28,96}"),
    P("deno-token", "deno-token", r"dd[po]_[A-Za-z0-9]{36}", anchors=("ddp_", "ddo_")),
    # -- cloud ---------------------------------------------------------------------------------
    P("aws-bedrock-key", "aws-secret-key", r"ABSK[A-Za-z0-9+/]{109,269}={0,2}"),
    P("google-api-key", "google-api-key", r"AIza[A-Za-z0-9_-]{35}"),
    P("google-oauth-client-secret", "google-oauth", r"GOCSPX-[A-Za-z0-9_-]{28}"),
    P("google-oauth-access-token", "google-oauth", r"ya29\.[A-Za-z0-9_-]{30,1024}"),
    P("google-oauth-refresh-token", "google-oauth", r"1//0[A-Za-z0-9_-]{40,1024}"),
    P("gcp-private-key-id", "gcp-service-account",
      r"private_key_id\"?[ \t]*[:=][ \t]*\"?(?P<t>[a-f0-9]{40})", group="t"),
    P("azure-storage-account-key", "azure-storage-key", r"AccountKey=(?P<t>[A-Za-z0-9+/]{86}==)", group="t"),
    P("azure-shared-access-key", "azure-storage-key",
      r"SharedAccessKey=(?P<t>[A-Za-z0-9+/]{40,90}={0,2})", group="t"),
    P("azure-ad-client-secret", "azure-client-secret", r"Q~[A-Za-z0-9_~.-]{31,34}",
      back=r"[A-Za-z0-9_~.]{3}\d", back_max=4),
    P("azure-sas-signature", "azure-sas", r"sig=(?P<t>[A-Za-z0-9%+/=]{30,120})", group="t", left="?&"),
    P("digitalocean-token", "digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}",
      anchors=("dop_v1_", "doo_v1_", "dor_v1_")),
    P("alibaba-access-key-id", "alibaba-key", r"LTAI[A-Za-z0-9]{12,20}"),
    P("heroku-api-key", "heroku-key", r"HRKU-[A-Za-z0-9_-]{58,60}"),
    P("databricks-token", "databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?"),
    P("vault-service-token", "vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,300}", anchors=("hvs.", "hvb.", "hvr.")),
    P("terraform-cloud-token", "terraform-token", r"\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
      back=r"[a-z0-9]{14}", back_max=14),
    P("doppler-token", "doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}", anchors=("dp.",)),
    P("pulumi-token", "pulumi-token", r"pul-[a-f0-9]{40}"),
    P("cloudflare-origin-ca-key", "cloudflare-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    P("cloudflare-api-token", "cloudflare-key", r"cf[ua]t_[A-Za-z0-9]{40}[a-f0-9]{8}", anchors=("cfut_", "cfat_")),
    P("flyio-token", "flyio-token", r"fo1_[A-Za-z0-9_-]{43}"),
    P("flyio-macaroon", "flyio-token", r"FlyV1 fm[12][ar]?_[A-Za-z0-9+/=,_-]{100,4096}"),
    P("supabase-token", "supabase-token", r"sbp_[a-f0-9]{40}"),
    P("supabase-secret-key", "supabase-token", r"sb_secret_[A-Za-z0-9_-]{31,1024}"),
    P("netlify-token", "netlify-token", r"nfp_[A-Za-z0-9]{36}"),
    P("tailscale-key", "tailscale-key", r"tskey-(?:api|auth|client|scim|webhook)-[A-Za-z0-9_-]{20,1024}"),
    P("openshift-token", "openshift-token", r"sha256~[A-Za-z0-9_-]{43}"),
    P("render-key", "render-key", r"rnd_[A-Za-z0-9]{32}"),
    P("planetscale-token", "planetscale-token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}"),
    P("neon-key", "neon-key", r"napi_[a-z0-9]{64}"),
    P("prefect-key", "prefect-key", r"pnu_[A-Za-z0-9]{36}"),
    P("infracost-key", "infracost-key", r"ico-[A-Za-z0-9]{32}"),
    P("octopus-key", "octopus-key", r"API-[A-Z0-9]{26}"),
    # -- chat and webhooks ---------------------------------------------------------------------
    P("slack-app-token", "slack-token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    P("slack-config-token", "slack-token", r"xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{100,4096}", anchors=("xoxe",)),
    P("slack-webhook", "slack-webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{40,1024}",
      right=False),
    P("discord-webhook", "discord-webhook", r"discord(?:app)?\.com/api/webhooks/\d{16,20}/(?P<t>[A-Za-z0-9_-]{60,70})",
      anchors=("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"), group="t"),
    P("teams-webhook", "teams-webhook",
      r"webhook\.office\.com/webhookb2/[A-Za-z0-9@-]{36,80}/IncomingWebhook/[a-f0-9]{32}/[a-f0-9-]{36}(?:/[A-Za-z0-9_-]{20,1024})?",
      body=0),
    P("teams-webhook-legacy", "teams-webhook",
      r"outlook\.office\.com/webhook/[A-Za-z0-9@-]{36,80}/IncomingWebhook/[a-f0-9]{32}/[a-f0-9-]{36}", body=0),
    P("telegram-bot-token", "telegram-token", r":AA[A-Za-z0-9_-]{33}", back=r"(?<![\d])\d{8,10}\Z", back_max=10, back_fixed=False),
    # the token in a Bot API URL: api.telegram.org/bot<id>:<secret>/sendMessage
    P("telegram-bot-token-url", "telegram-token", r"/bot(?P<t>\d{8,10}:AA[A-Za-z0-9_-]{33})", group="t"),
    P("zapier-webhook", "zapier-webhook", r"hooks\.zapier\.com/hooks/catch/\d+/[a-z0-9]{6,1024}", body=0),
    # -- payment -------------------------------------------------------------------------------
    P("stripe-secret-key", "stripe-key", r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,247}",
      anchors=("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_")),
    P("stripe-webhook-secret", "stripe-key", r"whsec_[A-Za-z0-9]{32,1024}"),
    P("square-access-token", "square-token", r"sq0atp-[A-Za-z0-9_-]{22,60}"),
    P("square-oauth-secret", "square-token", r"sq0csp-[A-Za-z0-9_-]{43}"),
    P("square-production-token", "square-token", r"EAAA[A-Za-z0-9_-]{60}", b64_left=True),
    P("braintree-access-token", "braintree-token", r"access_token\$production\$[a-z0-9]{16}\$[a-f0-9]{32}",
      body=24),
    P("shopify-token", "shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
      anchors=("shpat_", "shpca_", "shppa_", "shpss_")),
    P("flutterwave-secret-key", "flutterwave-key", r"FLWSECK(?:_TEST)?-[a-hA-H0-9]{32}-X"),
    P("plaid-access-token", "plaid-token", r"access-(?:sandbox|development|production)-" + _UUID,
      anchors=("access-sandbox-", "access-development-", "access-production-")),
    P("shippo-token", "shippo-token", r"shippo_(?:live|test)_[a-f0-9]{40}"),
    P("easypost-key", "easypost-key", r"EZ[AT]K[a-f0-9]{54}", anchors=("EZAK", "EZTK")),
    P("gocardless-token", "gocardless-token", r"live_[A-Za-z0-9_=-]{40}"),
    # -- email and SMS -------------------------------------------------------------------------
    P("sendgrid-key", "sendgrid-key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    P("mailgun-key", "mailgun-key", r"key-[a-f0-9]{32}"),
    P("mailgun-private-key", "mailgun-key", r"[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}",
      needs=("mailgun", "Mailgun", "MAILGUN"), body=0),
    P("mailchimp-key", "mailchimp-key", r"-us\d{1,2}", back=r"[a-f0-9]{32}", back_max=32),
    P("twilio-api-key", "twilio-key", r"SK[0-9a-fA-F]{32}"),
    P("brevo-key", "brevo-key", r"x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}", anchors=("xkeysib-", "xsmtpsib-")),
    P("mailersend-token", "mailersend-token", r"mlsn\.[a-f0-9]{64}"),
    # -- AI and SaaS APIs ----------------------------------------------------------------------
    P("anthropic-key", "anthropic-key", r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{80,1024}"),
    P("elevenlabs-key", "elevenlabs-key", r"sk_[a-f0-9]{48}"),
    P("huggingface-token", "huggingface-token", r"hf_[A-Za-z]{34}"),
    P("huggingface-org-token", "huggingface-token", r"api_org_[A-Za-z]{34}"),
    P("groq-key", "groq-key", r"gsk_[A-Za-z0-9]{52}"),
    P("replicate-token", "replicate-token", r"r8_[A-Za-z0-9]{37}"),
    P("perplexity-key", "perplexity-key", r"pplx-[A-Za-z0-9]{48}"),
    P("xai-key", "xai-key", r"xai-[A-Za-z0-9]{80}"),
    P("nvidia-key", "nvidia-key", r"nvapi-[A-Za-z0-9_-]{64}"),
    P("langsmith-key", "langsmith-key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    P("pinecone-key", "pinecone-key", r"pcsk_[A-Za-z0-9_]{50,1024}"),
    P("tavily-key", "tavily-key", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}"),
    P("grafana-service-account-token", "grafana-token", r"glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}"),
    P("grafana-cloud-token", "grafana-token", r"glc_[A-Za-z0-9+/]{32,400}={0,2}", b64_left=True),
    P("grafana-api-key", "grafana-token", r"eyJrIjoi[A-Za-z0-9+/]{50,1024}={0,2}", b64_left=True),
    P("sentry-user-token", "sentry-token", r"sntryu_[a-f0-9]{64}"),
    P("sentry-org-token", "sentry-token", r"sntrys_eyJ[A-Za-z0-9+/=_-]{50,1024}"),
    P("newrelic-user-key", "newrelic-key", r"NRAK-[A-Z0-9]{27}"),
    P("newrelic-insert-key", "newrelic-key", r"NRII-[A-Za-z0-9_-]{32}"),
    P("newrelic-license-key", "newrelic-key", r"NRAL", back=r"[a-f0-9]{36}", back_max=36),
    P("linear-key", "linear-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40,64}", anchors=("lin_api_", "lin_oauth_")),
    P("postman-key", "postman-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    P("notion-token", "notion-token", r"ntn_[0-9]{11}[A-Za-z0-9]{35}"),
    P("notion-legacy-token", "notion-token", r"secret_[A-Za-z0-9]{43}"),
    P("airtable-token", "airtable-token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", needs=("irtable", "IRTABLE")),
    P("figma-token", "figma-token", r"figd_[A-Za-z0-9_-]{40,1024}"),
    P("hubspot-token", "hubspot-token", r"pat-(?:na|eu)\d-" + _UUID, anchors=("pat-na", "pat-eu")),
    P("dynatrace-token", "dynatrace-token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    P("contentful-token", "contentful-token", r"CFPAT-[A-Za-z0-9_-]{43}"),
    P("mapbox-secret-token", "mapbox-token", r"sk\.eyJ[A-Za-z0-9_-]{20,1024}\.[A-Za-z0-9_-]{20,1024}"),
    P("facebook-token", "facebook-token", r"EAA[A-Za-z0-9]{90,1024}", b64_left=True),
    P("dropbox-token", "dropbox-token", r"sl\.[A-Za-z0-9_.-]{130,4096}", b64_left=True),
    P("firebase-fcm-key", "firebase-key", r":APA91b[A-Za-z0-9_-]{130,4096}", back=r"AAAA[A-Za-z0-9_-]{7}", back_max=11),
    P("onepassword-token", "onepassword-token", r"ops_eyJ[A-Za-z0-9+/]{250,4096}={0,3}", b64_left=True),
    P("onepassword-secret-key", "onepassword-token",
      r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}"),
    P("age-secret-key", "age-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    # no literal but a run of A (every base64 blob of zeros has one): found by its context words
    P("twitter-bearer-token", "twitter-token", r"(?<![A-Za-z0-9+/])A{20,24}[B-Za-z0-9%][A-Za-z0-9%]{59,139}",
      needs=("witter", "WITTER", "earer_token", "EARER_TOKEN", "earerToken"), body=22, b64_left=True),
    P("typeform-token", "typeform-token", r"tfp_[A-Za-z0-9_.-]{40,64}"),
    P("adafruit-key", "adafruit-key", r"aio_[A-Za-z0-9]{28}"),
    P("duffel-token", "duffel-token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}"),
    P("frameio-token", "frameio-token", r"fio-u-[A-Za-z0-9_=-]{64}"),
    P("readme-key", "readme-key", r"rdme_[a-z0-9]{70}"),
)
