"""More files of the realistic corpus (see ``corpus_repo`` for the template syntax)."""

from __future__ import annotations

FILES: dict[str, str] = {}

FILES["Dockerfile"] = r'''# syntax=docker/dockerfile:1.7
FROM node:20-bookworm-slim@«-:docker_digest» AS build ⟪hn⟫
ARG NPM_TOKEN ⟪hn⟫
ARG GITHUB_TOKEN ⟪hn⟫
ENV NODE_ENV=production
ENV NPM_CONFIG_REGISTRY=https://registry.npmjs.org/
WORKDIR /app
COPY package*.json ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci ⟪hn⟫
RUN echo "//registry.npmjs.org/:_authToken=${NPM_TOKEN}" > .npmrc && npm ci ⟪hn⟫
RUN echo "//npm.pkg.github.com/:_authToken=«github-token:github»" >> .npmrc
COPY . .
RUN npm run build

FROM python:3.12-slim
ENV PIP_INDEX_URL=https://deploy:«url-credentials:url_password»@pypi.acme-corp.com/simple/
ENV SENTRY_AUTH_TOKEN=«sentry-token:sentry»
ENV API_KEY=""
ENV DATABASE_PASSWORD=«secret-assignment:password»
ENV PASSWORD_FILE=/run/secrets/db_password ⟪hn⟫
RUN pip install --no-cache-dir -r requirements.txt
LABEL org.opencontainers.image.revision="«-:sha1»" ⟪hn⟫
HEALTHCHECK CMD curl -fsS http://localhost:8080/healthz || exit 1
CMD ["gunicorn", "billing.wsgi", "--bind", "0.0.0.0:8080"]
'''

FILES["docker-compose.yml"] = r'''services:
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: billing
      POSTGRES_PASSWORD: «secret-assignment:strong_password»
      POSTGRES_DB: billing
    healthcheck:
      test: ["CMD-SHELL", "pg_isready -U billing"]
  mysql:
    image: mysql:8.4
    environment:
      - MYSQL_ROOT_PASSWORD=«secret-assignment:password»
      - MYSQL_PASSWORD=${MYSQL_PASSWORD:?required} ⟪hn⟫
  rabbitmq:
    image: rabbitmq:3-management
    environment:
      RABBITMQ_DEFAULT_USER: billing
      RABBITMQ_DEFAULT_PASS: "«secret-assignment:strong_password»"
  api:
    build: .
    env_file: .env.production
    environment:
      DATABASE_URL: postgresql://billing:${POSTGRES_PASSWORD}@db:5432/billing ⟪hn⟫
      BROKER_URL: amqp://billing:«url-credentials:url_password»@rabbitmq:5672/
      ADMIN_PASSWORD: ${ADMIN_PASSWORD} ⟪hn⟫
    secrets:
      - db_password ⟪hn⟫
  adminer:
    image: adminer@«-:docker_digest» ⟪hn⟫

secrets:
  db_password:
    file: ./secrets/db_password.txt ⟪hn⟫
'''

FILES[".npmrc"] = r'''registry=https://registry.npmjs.org/
@acme:registry=https://npm.pkg.github.com/
//npm.pkg.github.com/:_authToken=${GITHUB_TOKEN} ⟪hn⟫
//registry.npmjs.org/:_authToken=«npm-token:npm»
//npm.acme-corp.com/:_authToken=«secret-assignment:uuid_token»
always-auth=true
'''

FILES[".yarnrc.yml"] = r'''nodeLinker: node-modules
npmRegistryServer: "https://registry.yarnpkg.com"
npmScopes:
  acme:
    npmRegistryServer: "https://npm.pkg.github.com"
    npmAlwaysAuth: true
    npmAuthToken: "«github-token:github»"
  internal:
    npmAuthToken: "${INTERNAL_NPM_TOKEN}" ⟪hn⟫
'''

FILES[".pypirc"] = r'''[distutils]
index-servers =
    pypi
    internal

[pypi]
username = __token__ ⟪hn⟫
password = «pypi-token:pypi»

[internal]
repository = https://pypi.acme-corp.com/
username = deploy
password = «secret-assignment:strong_password»
'''

FILES[".cargo/config.toml"] = r'''[registry]
default = "crates-io"
global-credential-providers = ["cargo:token"] ⟪hn⟫

[registries.crates-io]
protocol = "sparse"
token = "«crates-token:crates»"

[registries.acme]
index = "sparse+https://crates.acme-corp.com/index/"
token = "Bearer «secret-assignment:mixed40»"
credential-provider = "cargo:libsecret" ⟪hn⟫
'''

FILES["pyproject.toml"] = r'''[project]
name = "billing"
version = "1.14.2"
requires-python = ">=3.11"
dependencies = ["django>=5", "stripe>=9", "argon2-cffi"] ⟪hn⟫

[tool.poetry.source]
name = "internal"
url = "https://pypi.acme-corp.com/simple/"

[tool.pytest.ini_options]
env = ["API_TOKEN=test-token", "DB_PASSWORD=test"] ⟪hn⟫

[tool.billing.database]
host = "db.internal"
user = "billing"
password = "«secret-assignment:strong_password»"

[tool.billing.tokens]
max_tokens = 4096 ⟪hn⟫
token_type = "bearer" ⟪hn⟫
'''

FILES["config/production.toml"] = r'''[server]
bind = "0.0.0.0:8080"
secret_key = "«secret-assignment:hex_secret»"

[database]
url = "postgresql://billing:«url-credentials:url_password»@db.internal/billing"
pool_size = 20

[smtp]
host = "smtp.postmarkapp.com"
username = "apikey" ⟪hn⟫
password = "«secret-assignment:uuid_token»"

[oauth.github]
client_id = "Iv1.«-:hex16»" ⟪hn⟫
client_secret = "«secret-assignment:hex40»"

[feature_flags]
password_reset = true ⟪hn⟫
'''

FILES["terraform/main.tf"] = r'''terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "~> 5.0" }
  }
}

provider "aws" {
  region     = "eu-central-1"
  access_key = "«aws-access-key-id:aws_id»"
  secret_key = "«aws-secret-key:aws_secret»"
}

provider "digitalocean" {
  token = "«digitalocean-token:digitalocean»"
}

provider "cloudflare" {
  api_token = var.cloudflare_api_token ⟪hn⟫
}

variable "db_password" { ⟪hn⟫
  type      = string
  sensitive = true
}

resource "aws_db_instance" "billing" {
  engine         = "postgres"
  username       = "billing"
  password       = var.db_password ⟪hn⟫
  instance_class = "db.t4g.medium"
}

resource "random_password" "api" {
  length  = 32
  special = true
}

resource "datadog_monitor" "errors" {
  name    = "billing errors"
  message = "@slack-billing-alerts" ⟪hn⟫
}

locals {
  admin_password = "«secret-assignment:strong_password»"
  kms_key_arn    = "arn:aws:kms:eu-central-1:123456789012:key/«-:uuid4»" ⟪hn⟫
}
'''

FILES["terraform/.terraformrc"] = r'''plugin_cache_dir = "$HOME/.terraform.d/plugin-cache"
credentials "app.terraform.io" {
  token = "«terraform-token:terraform»"
}
'''

FILES["src/Billing.Api/appsettings.json"] = r'''{
  "Logging": { "LogLevel": { "Default": "Information" } },
  "ConnectionStrings": {
    "Billing": "Server=tcp:acme-billing.database.windows.net,1433;Initial Catalog=billing;User ID=billing_app;Password=«connection-string:strong_password»;Encrypt=True;",
    "Cache": "cache.internal:6380,password=«connection-string:strong_password»,ssl=True,abortConnect=False",
    "Local": "Server=(localdb)\\mssqllocaldb;Database=billing;Trusted_Connection=True;" ⟪hn⟫
  },
  "AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=acmebilling;AccountKey=«azure-storage-key:azure_storage_key»;EndpointSuffix=core.windows.net",
  "ServiceBus": "Endpoint=sb://acme-billing.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=«azure-storage-key:b64_32»",
  "AzureAd": {
    "Instance": "https://login.microsoftonline.com/",
    "TenantId": "«-:uuid4»", ⟪hn⟫
    "ClientId": "«-:uuid4»", ⟪hn⟫
    "ClientSecret": "«azure-client-secret:azure_client_secret»"
  },
  "Blob": "https://acmebilling.blob.core.windows.net/invoices?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-01-01T00:00:00Z&sig=«azure-sas:azure_sas_sig»",
  "Jwt": { "Issuer": "billing", "SigningKey": "«secret-assignment:b64_secret»", "ExpiresMinutes": 60 },
  "PasswordPolicy": { "RequiredLength": 12, "RequireDigit": true } ⟪hn⟫
}
'''

FILES["NuGet.Config"] = r'''<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" protocolVersion="3" />
    <add key="acme" value="https://pkgs.dev.azure.com/acme/_packaging/billing/nuget/v3/index.json" />
  </packageSources>
  <packageSourceCredentials>
    <acme>
      <add key="Username" value="ci" /> ⟪hn⟫
      <add key="ClearTextPassword" value="«secret-assignment:strong_password»" />
    </acme>
  </packageSourceCredentials>
  <apikeys>
    <add key="https://www.nuget.org" value="«nuget-key:nuget»" />
  </apikeys>
</configuration>
'''

FILES[".m2/settings.xml"] = r'''<settings>
  <servers>
    <server>
      <id>acme-releases</id>
      <username>deploy</username> ⟪hn⟫
      <password>«secret-assignment:strong_password»</password>
    </server>
    <server>
      <id>acme-snapshots</id>
      <username>${env.MAVEN_USER}</username> ⟪hn⟫
      <password>${env.MAVEN_PASSWORD}</password> ⟪hn⟫
    </server>
    <server>
      <id>artifactory</id>
      <password>«jfrog-token:jfrog»</password>
    </server>
  </servers>
</settings>
'''

FILES["src/main/resources/application.properties"] = r'''spring.application.name=billing
spring.datasource.url=jdbc:postgresql://db.internal:5432/billing?user=billing&password=«connection-string:strong_password»
spring.datasource.username=billing
spring.datasource.password=«secret-assignment:strong_password»
spring.mail.password=${MAIL_PASSWORD} ⟪hn⟫
server.ssl.key-store-password=«secret-assignment:password»
server.ssl.key-store=classpath:keystore.p12 ⟪hn⟫
jwt.secret=${JWT_SECRET:} ⟪hn⟫
security.oauth2.client.registration.github.client-secret=«secret-assignment:hex40»
management.endpoints.web.exposure.include=health,info
spring.security.user.password={bcrypt}«-:bcrypt» ⟪hn⟫
'''

FILES["src/main/resources/application.yml"] = r'''spring:
  datasource:
    url: jdbc:mysql://db.internal:3306/billing
    username: billing
    password: «secret-assignment:strong_password»
  rabbitmq:
    host: rabbitmq
    password: ${RABBITMQ_PASSWORD} ⟪hn⟫
  security:
    oauth2:
      client:
        registration:
          google:
            client-id: «-:digits12»-«-:lower32».apps.googleusercontent.com ⟪hn⟫
            client-secret: «google-oauth:gcp_oauth_secret»
app:
  jwt:
    signing-key: «secret-assignment:b64_secret»
    token-validity: 3600 ⟪hn⟫
  encryption:
    key-id: billing-2024 ⟪hn⟫
'''

FILES["config/database.yml"] = r'''default: &default
  adapter: postgresql
  encoding: unicode
  pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>

development:
  <<: *default
  database: billing_development
  password: <%= ENV["BILLING_DATABASE_PASSWORD"] %> ⟪hn⟫

production:
  <<: *default
  database: billing_production
  username: billing
  password: «secret-assignment:strong_password»
  url: postgres://billing:«url-credentials:url_password»@db.internal/billing_production
'''

FILES["public/index.html"] = r'''<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Acme Billing</title>
  <meta name="csrf-token" content="{{ csrf_token }}"> ⟪hn⟫
  <link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/css/bootstrap.min.css"
        integrity="«-:sri»" crossorigin="anonymous"> ⟪hn⟫
  <link rel="icon" href="«-:png_data_uri»"> ⟪hn⟫
  <script async src="https://www.googletagmanager.com/gtag/js?id=«-:ga_id»"></script> ⟪hn⟫
  <script src="https://maps.googleapis.com/maps/api/js?key=«google-api-key:google_api_key»&callback=initMap" defer></script>
  <script src="https://js.stripe.com/v3/"></script>
</head>
<body>
  <form method="post" action="/login">
    <input type="email" name="email" placeholder="you@company.com" autocomplete="username"> ⟪hn⟫
    <input type="password" name="password" placeholder="Password" autocomplete="current-password"> ⟪hn⟫
    <input type="hidden" name="api_key" value="«secret-assignment:mixed32»">
    <button type="submit">Sign in</button>
  </form>
  <img alt="logo" src="«-:png_data_uri»"> ⟪hn⟫
  <p>Questions? Write to <a href="mailto:«email:email»">billing support</a> or call «phone:phone».</p>
  <script>
    window.__CONFIG__ = {"stripeKey": "«-:stripe_publishable»", "sentryDsn": "«-:sentry_dsn»"}; ⟪hn⟫
    const stripe = Stripe(window.__CONFIG__.stripeKey); ⟪hn⟫
    const algoliaAdminKey = "«secret-assignment:hex_secret»";
    fetch("/api/me", { headers: { "Authorization": "Bearer " + localStorage.getItem("token") } }); ⟪hn⟫
  </script>
</body>
</html>
'''

FILES["public/fonts.css"] = r'''@font-face {
  font-family: "Inter";
  src: url(«-:woff_data_uri») format("woff2"); ⟪hn⟫
  font-display: swap;
}
.logo { background-image: url("«-:png_data_uri»"); } ⟪hn⟫
/*# sourceMappingURL=data:application/json;base64,«-:b64_secret» */ ⟪hn⟫
'''

FILES["package-lock.json"] = r'''{
  "name": "billing-web",
  "lockfileVersion": 3,
  "packages": {
    "node_modules/zod": {
      "version": "3.23.8",
      "resolved": "https://registry.npmjs.org/zod/-/zod-3.23.8.tgz",
      "integrity": "«-:sri»" ⟪hn⟫
    },
    "node_modules/jsonwebtoken": {
      "version": "9.0.2",
      "resolved": "https://registry.npmjs.org/jsonwebtoken/-/jsonwebtoken-9.0.2.tgz",
      "integrity": "«-:sri»" ⟪hn⟫
    },
    "node_modules/@acme/tokens": {
      "version": "1.0.0",
      "resolved": "https://npm.pkg.github.com/download/@acme/tokens/1.0.0/«-:sha1»", ⟪hn⟫
      "integrity": "«-:sri»" ⟪hn⟫
    }
  }
}
'''

FILES["poetry.lock"] = r'''[[package]]
name = "stripe"
version = "9.12.0"
files = [
    {file = "stripe-9.12.0-py2.py3-none-any.whl", hash = "sha256:«-:sha256»"}, ⟪hn⟫
    {file = "stripe-9.12.0.tar.gz", hash = "sha256:«-:sha256»"}, ⟪hn⟫
]

[metadata]
content-hash = "«-:sha256»" ⟪hn⟫
'''

FILES["docs/setup.md"] = r'''# Local setup

1. Copy `.env.example` to `.env`.
2. Create a token at https://github.com/settings/tokens and export it:

   ```sh
   export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx ⟪hn⟫
   export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE ⟪hn⟫
   export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ⟪hn⟫
   export STRIPE_API_KEY=sk_test_4eC39HqLyjWDarjtT1zdp7dc ⟪hn⟫
   ```

3. Connect with `psql postgresql://USER:PASSWORD@localhost:5432/billing` or ⟪hn⟫
   `mysql -u root -p` (you will be prompted for the password). ⟪hn⟫
4. The API expects `Authorization: Bearer <token>`; see `curl -u user:password` below. ⟪hn⟫

   ```sh
   curl -u "$USER:$TOKEN" https://api.acme-corp.com/v1/me ⟪hn⟫
   curl -H "Authorization: Bearer YOUR_TOKEN_HERE" https://api.acme-corp.com/v1/me ⟪hn⟫
   ```

The staging webhook is `«slack-webhook:slack_webhook»` (rotate it after the demo).
Maintainer: «email:email»
Our signing key fingerprint is `SHA256:«-:b64_secret»`. ⟪hn⟫
Deploy key (public): `«-:ssh_public»` ⟪hn⟫
'''

FILES[".git-credentials"] = r'''https://ci-bot:«github-token:github»@github.com
https://deploy:«url-credentials:url_password»@git.acme-corp.com
'''

FILES[".netrc"] = r'''machine api.heroku.com
  login «email:email»
  password «heroku-key:heroku»
machine github.com login ci-bot password «github-token:github»
'''

FILES[".circleci/config.yml"] = r'''version: 2.1
orbs:
  slack: circleci/slack@4.12.5
jobs:
  build:
    docker:
      - image: cimg/python:3.12
        auth:
          username: acmebot
          password: $DOCKERHUB_PASSWORD ⟪hn⟫
    environment:
      CIRCLE_TOKEN: «circleci-token:circleci»
      CODECOV_TOKEN: «secret-assignment:uuid_token»
    steps:
      - checkout
      - run: pip install -r requirements.txt
      - run: pytest --junitxml=test-results/junit.xml
'''

FILES["bitbucket-pipelines.yml"] = r'''image: atlassian/default-image:4
pipelines:
  default:
    - step:
        name: Test
        script:
          - export BITBUCKET_APP_PASSWORD=«bitbucket-token:bitbucket_app_password»
          - export ATLASSIAN_API_TOKEN=«atlassian-token:atlassian»
          - git push https://x-token-auth:$REPOSITORY_OAUTH_ACCESS_TOKEN@bitbucket.org/acme/billing.git ⟪hn⟫
          - pipe: atlassian/slack-notify:2.2.0
            variables:
              WEBHOOK_URL: $SLACK_WEBHOOK ⟪hn⟫
'''

FILES["Jenkinsfile"] = r'''pipeline {
  agent any
  environment {
    REGISTRY_CREDS = credentials('registry-creds') ⟪hn⟫
    SONAR_TOKEN = '«sonar-token:sonar»'
  }
  stages {
    stage('Publish') {
      steps {
        withCredentials([string(credentialsId: 'npm-token', variable: 'NPM_TOKEN')]) { ⟪hn⟫
          sh 'docker login -u admin -p ${DOCKER_PASS} registry.acme-corp.com' ⟪hn⟫
          sh "curl -u deployer:«cli-password:strong_password» -T dist/app.tgz https://artifacts.acme-corp.com/upload"
        }
      }
    }
  }
}
'''

FILES["billing/llm.py"] = r'''"""Summaries of invoices with a hosted model."""
import os

from anthropic import Anthropic
from groq import Groq
from huggingface_hub import InferenceClient

anthropic = Anthropic(api_key="«anthropic-key:anthropic»")
groq = Groq(api_key=os.environ.get("GROQ_API_KEY")) ⟪hn⟫
hf = InferenceClient(token="«huggingface-token:huggingface»")
REPLICATE_API_TOKEN = "«replicate-token:replicate»"
PERPLEXITY_KEY = "«perplexity-key:perplexity»"
XAI_KEY = os.getenv("XAI_API_KEY", "xai-...") ⟪hn⟫
xai_key = "«xai-key:xai»"
MAX_TOKENS = 1024 ⟪hn⟫
TOKENIZER = "cl100k_base" ⟪hn⟫
PROMPT_TOKEN_LIMIT = 200_000 ⟪hn⟫
SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>"} ⟪hn⟫
'''

FILES["monitoring/values.yaml"] = r'''grafana:
  adminUser: admin
  adminPassword: «secret-assignment:strong_password»
  serviceAccountToken: «grafana-token:grafana»
  envFromSecret: grafana-env ⟪hn⟫
newrelic:
  licenseKey: «secret-assignment:hex40»
  userApiKey: «newrelic-key:newrelic»
datadog:
  apiKey: «secret-assignment:datadog_key»
  apiKeyExistingSecret: datadog-secret ⟪hn⟫
  appKey: «secret-assignment:hex40»
  site: datadoghq.eu
dynatrace:
  apiToken: «dynatrace-token:dynatrace»
sentry:
  authToken: «sentry-token:sentry»
  dsn: «-:sentry_dsn» ⟪hn⟫
alertmanager:
  config:
    receivers:
      - name: team-billing
        slack_configs:
          - api_url: «slack-webhook:slack_webhook»
            channel: "#billing-alerts"
        webhook_configs:
          - url: «teams-webhook:teams_webhook»
        pagerduty_configs:
          - routing_key: «secret-assignment:hex_secret»
'''

FILES["billing/notify.ts"] = r'''import axios from "axios";

const TELEGRAM_BOT_TOKEN = "«telegram-token:telegram»";
const linear = new LinearClient({ apiKey: "«linear-key:linear»" });
const notion = new Client({ auth: "«notion-token:notion»" });
const airtableToken = "«airtable-token:airtable»";
const figmaToken = "«figma-token:figma»";
const hubspot = new hubspotClient({ accessToken: "«hubspot-token:hubspot»" });
const postmanKey = "«postman-key:postman»";
const shopifyAdminToken = "«shopify-token:shopify»";
const contentful = createClient({ accessToken: "«contentful-token:contentful»" });
const fbPageToken = "«facebook-token:facebook»";
const dropboxToken = "«dropbox-token:dropbox»";
const fcmServerKey = "«firebase-key:fcm»";

export async function notify(chatId: string, text: string): Promise<void> {
  const tokenParam = encodeURIComponent(text); ⟪hn⟫
  await axios.post(`https://api.telegram.org/bot${TELEGRAM_BOT_TOKEN}/sendMessage`, { chat_id: chatId, text }); ⟪hn⟫
}

export const TOKEN_REFRESH_MARGIN_MS = 30_000; ⟪hn⟫
export const passwordResetPath = "/account/password/reset"; ⟪hn⟫
export const secretsManagerArn = "arn:aws:secretsmanager:eu-central-1:123456789012:secret:billing/db-«-:hex6»"; ⟪hn⟫
'''

FILES["billing/payments.rb"] = r'''# frozen_string_literal: true

Stripe.api_key = ENV.fetch("STRIPE_SECRET_KEY") ⟪hn⟫
Braintree::Configuration.environment = :production
gateway = Braintree::Gateway.new(access_token: "«braintree-token:braintree»")
SQUARE_ACCESS_TOKEN = "«square-token:square»"
Flutterwave.secret_key = "«flutterwave-key:flutterwave»"
PLAID_ACCESS_TOKEN = "«plaid-token:plaid»"
PAYPAL_CLIENT_ID = "A«-:mixed40»" ⟪hn⟫
PAYPAL_CLIENT_SECRET = "«secret-assignment:paypal_secret»"
SHIPPO_TOKEN = ENV["SHIPPO_TOKEN"] ⟪hn⟫
EASYPOST_API_KEY = "«easypost-key:easypost»"
BREVO_KEY = "«brevo-key:brevo»"
MAILERSEND_TOKEN = "«mailersend-token:mailersend»"
password_digest = BCrypt::Password.create(params[:password]) ⟪hn⟫
config.filter_parameters += [:password, :token, :secret, :api_key] ⟪hn⟫
'''

FILES["infra/cloud.env"] = r'''# infra automation credentials (rotate quarterly)
ALIBABA_CLOUD_ACCESS_KEY_ID=«alibaba-key:alibaba»
HEROKU_API_KEY=«heroku-key:heroku»
DATABRICKS_TOKEN=«databricks-token:databricks»
DOPPLER_TOKEN=«doppler-token:doppler»
PULUMI_ACCESS_TOKEN=«pulumi-token:pulumi»
CLOUDFLARE_ORIGIN_CA_KEY=«cloudflare-key:cloudflare_origin_ca»
FLY_API_TOKEN=«flyio-token:flyio»
SUPABASE_ACCESS_TOKEN=«supabase-token:supabase»
NETLIFY_AUTH_TOKEN=«netlify-token:netlify»
TS_AUTHKEY=«tailscale-key:tailscale»
BUILDKITE_API_TOKEN=«buildkite-token:buildkite»
SRC_ACCESS_TOKEN=«sourcegraph-token:sourcegraph»
RUBYGEMS_API_KEY=«rubygems-token:rubygems»
CLOJARS_TOKEN=«clojars-token:clojars»
OP_SERVICE_ACCOUNT_TOKEN=«onepassword-token:onepassword»
SOPS_AGE_KEY=«age-key:age»
TWITTER_BEARER_TOKEN=«twitter-token:twitter_bearer»
OPENSHIFT_TOKEN=«openshift-token:openshift»
SLACK_APP_TOKEN=«slack-token:slack_app»
GOOGLE_OAUTH_ACCESS_TOKEN=«google-oauth:google_access»
DOCKER_SWARM_TOKEN_FILE=/etc/swarm/token ⟪hn⟫
TOKEN_CACHE_DIR=/var/cache/tokens ⟪hn⟫
'''

FILES["scripts/rotate_keys.py"] = r'''#!/usr/bin/env python3
"""Rotate service keys; prints new values to stdout for the vault import job."""
import argparse
import secrets
import subprocess

parser = argparse.ArgumentParser()
parser.add_argument("--password", help="admin password (prompted when missing)") ⟪hn⟫
parser.add_argument("--token", default=None) ⟪hn⟫
args = parser.parse_args()

new_secret = secrets.token_urlsafe(32) ⟪hn⟫
subprocess.run(["vault", "login", "-method=userpass", "username=ops", "password=«cli-password:strong_password»"], check=True)
subprocess.run(["vault", "kv", "put", "secret/billing", f"api_key={new_secret}"], check=True) ⟪hn⟫
subprocess.run(["psql", "-c", "ALTER USER billing PASSWORD '«cli-password:strong_password»'"], check=True)
subprocess.run(["docker", "login", "-u", "ops", "--password", "«cli-password:strong_password»"], check=True)
print(f"rotated: token={new_secret[:4]}…") ⟪hn⟫
'''

FILES["internal/fixtures/fixtures_test.go"] = r'''package fixtures

import "testing"

const (
	fakeToken    = "fake-token-for-tests" ⟪hn⟫
	testPassword = "testpass" ⟪hn⟫
	exampleKey   = "AKIAIOSFODNN7EXAMPLE" ⟪hn⟫
	wantDigest   = "«-:sha256»" ⟪hn⟫
	sessionID    = "«-:uuid4»" ⟪hn⟫
)

func TestParse(t *testing.T) {
	got := Parse("token=" + fakeToken) ⟪hn⟫
	if got.Password != "" { ⟪hn⟫
		t.Fatalf("password = %q, want empty", got.Password) ⟪hn⟫
	}
}
'''
