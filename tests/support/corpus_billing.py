"""The labelled corpus's first repository, a billing service: the .env files, CI, Helm,
Kubernetes, shell, Python, Go, TypeScript and JSON files (see ``corpus_repo`` for the
template syntax; the rest of its files are in ``corpus_repo_files``)."""

from __future__ import annotations

FILES: dict[str, str] = {}

FILES[".env.production"] = r'''# Production settings for the billing service (loaded by docker compose)
APP_ENV=production
APP_URL=https://billing.acme-corp.com
LOG_LEVEL=info
PORT=8080
DATABASE_URL=postgres://billing_app:«url-credentials:url_password»@db.internal.acme-corp.com:5432/billing
REDIS_URL=rediss://:«url-credentials:url_password»@cache.internal.acme-corp.com:6380/0
AMQP_URL=amqp://billing:«url-credentials:url_password»@rabbitmq:5672/%2f
STRIPE_SECRET_KEY=«stripe-key:stripe»
STRIPE_PUBLISHABLE_KEY=«-:stripe_publishable» ⟪hn⟫
STRIPE_WEBHOOK_SECRET=«stripe-key:stripe_webhook»
SENDGRID_API_KEY=«sendgrid-key:sendgrid»
TWILIO_ACCOUNT_SID=«-:twilio_sid» ⟪hn⟫
TWILIO_API_KEY=«twilio-key:twilio_key»
TWILIO_AUTH_TOKEN=«secret-assignment:hex_secret»
SENTRY_DSN=«-:sentry_dsn» ⟪hn⟫
NEXT_PUBLIC_GA_ID=«-:ga_id» ⟪hn⟫
OPENAI_API_KEY=«openai-key:openai»
ANTHROPIC_API_KEY="«anthropic-key:anthropic»"
SESSION_SECRET='«secret-assignment:b64_secret»'
JWT_EXPIRES_IN=3600 ⟪hn⟫
PASSWORD_RESET_TTL=900 ⟪hn⟫
TOKEN_ISSUER=https://auth.acme-corp.com/ ⟪hn⟫
SUPPORT_EMAIL=«email:email»
'''

FILES[".env.example"] = r'''# Copy to .env and fill in. Never commit real values.
APP_ENV=development
DATABASE_URL=postgres://user:password@localhost:5432/billing_dev ⟪hn⟫
REDIS_URL=redis://localhost:6379/0 ⟪hn⟫
STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx ⟪hn⟫
STRIPE_WEBHOOK_SECRET=whsec_... ⟪hn⟫
SENDGRID_API_KEY=SG.your-sendgrid-key ⟪hn⟫
OPENAI_API_KEY=sk-... ⟪hn⟫
ANTHROPIC_API_KEY=<your-anthropic-key> ⟪hn⟫
GITHUB_TOKEN= ⟪hn⟫
SESSION_SECRET=changeme ⟪hn⟫
JWT_SECRET=replace-me-in-production ⟪hn⟫
AWS_ACCESS_KEY_ID=AKIA************** ⟪hn⟫
AWS_SECRET_ACCESS_KEY=******** ⟪hn⟫
SLACK_WEBHOOK_URL=https://hooks.slack.com/services/XXXXXXXXX/XXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX ⟪hn⟫
DB_PASSWORD=${DB_PASSWORD} ⟪hn⟫
MAILCHIMP_API_KEY=your_mailchimp_api_key-us1 ⟪hn⟫
'''

FILES[".github/workflows/release.yml"] = r'''name: release

on:
  push:
    tags: ["v*"]

permissions:
  contents: write
  id-token: write

env:
  REGISTRY: ghcr.io
  IMAGE_NAME: ${{ github.repository }} ⟪hn⟫
  NPM_TOKEN: «npm-token:npm»
  SLACK_WEBHOOK: «slack-webhook:slack_webhook»

jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@«-:sha1» # v4.1.7 ⟪hn⟫
      - uses: actions/setup-node@«-:sha1» ⟪hn⟫
        with:
          node-version: 20
          registry-url: https://registry.npmjs.org
      - name: Log in to the registry
        uses: docker/login-action@v3
        with:
          registry: ${{ env.REGISTRY }}
          username: ${{ github.actor }}
          password: ${{ secrets.GITHUB_TOKEN }} ⟪hn⟫
      - name: Log in to Docker Hub
        run: echo "«dockerhub-token:dockerhub»" | docker login -u acmebot --password-stdin
      - name: Publish
        run: npm publish --provenance
        env:
          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }} ⟪hn⟫
      - name: Notify
        run: |
          curl -sS -X POST -H 'Content-type: application/json' \
            --data '{"text":"released ${{ github.ref_name }}"}' "$SLACK_WEBHOOK" ⟪hn⟫
      - name: Upload to PyPI
        env:
          TWINE_USERNAME: __token__ ⟪hn⟫
          TWINE_PASSWORD: «pypi-token:pypi»
        run: twine upload dist/*
'''

FILES[".gitlab-ci.yml"] = r'''stages: [test, build, deploy]

variables:
  POSTGRES_DB: app_test
  POSTGRES_USER: runner
  POSTGRES_PASSWORD: «secret-assignment:password»
  GITLAB_API_TOKEN: «gitlab-token:gitlab_pat»
  DOCKER_AUTH_CONFIG: $DOCKER_AUTH_CONFIG ⟪hn⟫

test:
  stage: test
  image: python:3.12@«-:docker_digest» ⟪hn⟫
  services: [postgres:16]
  script:
    - pip install -r requirements.txt
    - pytest -q

migrate:
  stage: deploy
  script:
    - mysql -h "$DB_HOST" -u root -p"$MYSQL_ROOT_PASSWORD" app < schema.sql ⟪hn⟫
    - mysql -h db.staging -u root -p«cli-password:password» app < seed.sql
    - mysqldump --user=backup --password=«cli-password:strong_password» app > dump.sql
    - 'curl --header "PRIVATE-TOKEN: $CI_JOB_TOKEN" "$CI_API_V4_URL/projects"' ⟪hn⟫
    - 'curl --header "PRIVATE-TOKEN: «gitlab-token:gitlab_pat»" https://gitlab.acme-corp.com/api/v4/projects'
    - git clone https://oauth2:«gitlab-token:gitlab_pat»@gitlab.acme-corp.com/platform/charts.git

register-runner:
  stage: build
  script:
    - gitlab-runner register --non-interactive --url https://gitlab.acme-corp.com --token «gitlab-token:gitlab»
    - echo "runner registered with $RUNNER_TOKEN" ⟪hn⟫
'''

FILES["charts/billing/values.yaml"] = r'''# Default values for billing.
replicaCount: 2

image:
  repository: registry.acme-corp.com/billing/api
  tag: "1.14.2"
  digest: «-:docker_digest» ⟪hn⟫
  pullPolicy: IfNotPresent

imagePullSecrets:
  - name: regcred ⟪hn⟫

serviceAccount:
  create: true
  name: billing ⟪hn⟫

postgresql:
  enabled: true
  auth:
    username: billing
    password: "«secret-assignment:strong_password»"
    postgresPassword: «secret-assignment:password»
    existingSecret: "" ⟪hn⟫
    secretKeys:
      userPasswordKey: password ⟪hn⟫

redis:
  auth:
    enabled: true
    password: "" ⟪hn⟫
    existingSecret: billing-redis ⟪hn⟫
    existingSecretPasswordKey: redis-password ⟪hn⟫

config:
  webhookSecret: «secret-assignment:hex_secret»
  googleMapsApiKey: «google-api-key:google_api_key»
  apiKey: "{{ .Values.global.apiKey }}" ⟪hn⟫
  sentryDsn: «-:sentry_dsn» ⟪hn⟫
  mailchimp:
    apiKey: «mailchimp-key:mailchimp»
    listId: 9f3c21ab07 ⟪hn⟫

ingress:
  enabled: true
  tls:
    - secretName: billing-tls ⟪hn⟫
      hosts: [billing.acme-corp.com]

extraEnv:
  - name: DATABASE_PASSWORD
    valueFrom:
      secretKeyRef: ⟪hn⟫
        name: billing-db ⟪hn⟫
        key: password ⟪hn⟫
  - name: SLACK_BOT_TOKEN
    value: «slack-token:slack»
  - name: TOKEN_TTL_SECONDS
    value: "3600" ⟪hn⟫
'''

FILES["k8s/secrets.yaml"] = r'''apiVersion: v1
kind: Secret
metadata:
  name: billing-db
  namespace: billing
type: Opaque
data:
  username: «-:b64_user» ⟪hn⟫
  password: «k8s-secret:b64_password»
  api-token: «k8s-secret:b64_token»
---
apiVersion: v1
kind: Secret
metadata:
  name: billing-tls
type: kubernetes.io/tls
data:
  tls.crt: «-:cert_b64» ⟪hn⟫
  tls.key: «private-key:pem_b64»
---
apiVersion: v1
kind: Secret
metadata:
  name: mail
stringData:
  SMTP_USER: apikey ⟪hn⟫
  SMTP_PASSWORD: «sendgrid-key:sendgrid»
---
apiVersion: v1
kind: Secret
metadata:
  name: regcred
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: «docker-auth:dockerconfigjson_b64»
'''

FILES["k8s/deployment.yaml"] = r'''apiVersion: apps/v1
kind: Deployment
metadata:
  name: billing-api
  labels:
    app.kubernetes.io/name: billing
  annotations:
    checksum/config: «-:sha256» ⟪hn⟫
spec:
  replicas: 2
  template:
    spec:
      serviceAccountName: billing ⟪hn⟫
      imagePullSecrets:
        - name: regcred ⟪hn⟫
      containers:
        - name: api
          image: registry.acme-corp.com/billing/api@«-:docker_digest» ⟪hn⟫
          env:
            - name: DB_PASSWORD ⟪hn⟫
              valueFrom:
                secretKeyRef: {name: billing-db, key: password} ⟪hn⟫
            - name: API_TOKEN ⟪hn⟫
              valueFrom:
                secretKeyRef:
                  name: billing-db
                  key: api-token ⟪hn⟫
            - name: NEW_RELIC_LICENSE_KEY
              value: «secret-assignment:hex_secret»
            - name: DD_API_KEY
              value: "«secret-assignment:datadog_key»"
            - name: REQUEST_ID_HEADER
              value: X-Request-Id ⟪hn⟫
          volumeMounts:
            - name: tls
              mountPath: /etc/tls
              readOnly: true
      volumes:
        - name: tls
          secret:
            secretName: billing-tls ⟪hn⟫
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: billing-config
data:
  LOG_LEVEL: info
  TOKEN_URL: https://auth.acme-corp.com/oauth/token ⟪hn⟫
  PASSWORD_MIN_LENGTH: "12" ⟪hn⟫
  SECRET_NAME: billing-db ⟪hn⟫
'''

FILES["deploy/kubeconfig.yaml"] = r'''apiVersion: v1
kind: Config
clusters:
  - name: prod
    cluster:
      server: https://k8s.acme-corp.com:6443
      certificate-authority-data: «-:cert_b64» ⟪hn⟫
users:
  - name: deployer
    user:
      client-certificate-data: «-:cert_b64» ⟪hn⟫
      client-key-data: «private-key:pem_b64»
  - name: ci
    user:
      token: «jwt:k8s_sa_token»
contexts:
  - name: prod
    context: {cluster: prod, user: deployer}
current-context: prod
'''

FILES["scripts/deploy.sh"] = r'''#!/usr/bin/env bash
# Deploy the billing service to the staging cluster.
set -euo pipefail

export AWS_ACCESS_KEY_ID=«aws-access-key-id:aws_id»
export AWS_SECRET_ACCESS_KEY=«aws-secret-key:aws_secret»
export AWS_DEFAULT_REGION=eu-central-1
export VAULT_ADDR=https://vault.acme-corp.com:8200
export VAULT_TOKEN=«vault-token:vault»
export HF_TOKEN=«huggingface-token:huggingface»

: "${DB_PASSWORD:?set DB_PASSWORD}" ⟪hn⟫
read -rsp "Deploy password: " DEPLOY_PASSWORD ⟪hn⟫
echo

RELEASE_SHA="$(git rev-parse HEAD)"
SESSION_KEY="$(openssl rand -hex 32)" ⟪hn⟫
echo "deploying «-:sha1»" ⟪hn⟫

PGPASSWORD=«cli-password:password» psql -h db.staging.acme-corp.com -U billing -c 'select 1'
PGPASSWORD="$DB_PASSWORD" psql -h db.staging.acme-corp.com -U billing -f migrate.sql ⟪hn⟫
sshpass -p '«cli-password:strong_password»' ssh deploy@10.0.4.12 'sudo systemctl restart billing'
curl -fsS -u admin:«cli-password:strong_password» https://nexus.acme-corp.com/service/rest/v1/status
curl -fsS -u "$NEXUS_USER:$NEXUS_PASSWORD" https://nexus.acme-corp.com/service/rest/v1/status ⟪hn⟫
curl -fsS -H "Authorization: Bearer «auth-header:opaque_token»" https://api.acme-corp.com/v1/deployments
curl -fsS -H "Authorization: Bearer ${DEPLOY_TOKEN}" https://api.acme-corp.com/v1/deployments ⟪hn⟫
curl -fsS -H "X-Api-Key: $API_KEY" https://status.acme-corp.com/api ⟪hn⟫
helm upgrade --install billing charts/billing \
  --set postgresql.auth.password="«cli-password:strong_password»" \
  --set image.tag="$RELEASE_SHA"
kubectl create secret generic billing-db --from-literal=password=«cli-password:strong_password» --dry-run=client -o yaml
kubectl create secret generic billing-db --from-literal=password="$DB_PASSWORD" --dry-run=client -o yaml ⟪hn⟫
docker login registry.acme-corp.com -u ci -p «cli-password:strong_password»
docker login registry.acme-corp.com -u ci --password-stdin <<< "$REGISTRY_TOKEN" ⟪hn⟫
echo "sha256 of artefact: «-:sha256»" ⟪hn⟫
'''

FILES["scripts/backup.sh"] = r'''#!/bin/sh
# Nightly backup: dump MySQL and Redis, push to object storage.
BACKUP_DIR=/var/backups/billing
STAMP=$(date +%Y%m%dT%H%M%S)

mysqldump -h 127.0.0.1 -u backup -p'«cli-password:strong_password»' --single-transaction billing | gzip > "$BACKUP_DIR/billing-$STAMP.sql.gz"
mysqldump -u backup -p"${MYSQL_BACKUP_PASSWORD}" billing > /dev/null ⟪hn⟫
mysql -u root -p -e 'SHOW DATABASES' ⟪hn⟫
redis-cli -h cache.internal -a «cli-password:strong_password» --rdb "$BACKUP_DIR/dump-$STAMP.rdb"
redis-cli -h cache.internal -a "$REDIS_PASSWORD" ping ⟪hn⟫
mongodump --uri="mongodb+srv://backup:«url-credentials:url_password»@cluster0.x1y2z.mongodb.net/billing" --out "$BACKUP_DIR/mongo"
mongodump --uri="mongodb://backup:${MONGO_PASSWORD}@mongo:27017/billing" ⟪hn⟫
rclone copy "$BACKUP_DIR" remote:billing-backups --s3-secret-access-key="«cli-password:aws_secret»"
md5sum "$BACKUP_DIR"/*.gz > "$BACKUP_DIR/MD5SUMS"
'''

FILES["billing/settings.py"] = r'''"""Django settings for billing."""
import os
from pathlib import Path

import environ

env = environ.Env()
BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "django-insecure-«secret-assignment:django_key»"
DEBUG = False
ALLOWED_HOSTS = ["billing.acme-corp.com"]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "billing",
        "USER": "billing",
        "PASSWORD": "«secret-assignment:strong_password»",
        "HOST": "db.internal",
    },
    "replica": {
        "ENGINE": "django.db.backends.postgresql",
        "PASSWORD": os.environ["REPLICA_DB_PASSWORD"], ⟪hn⟫
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"}, ⟪hn⟫
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"}, ⟪hn⟫
]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"] ⟪hn⟫
PASSWORD_RESET_TIMEOUT = 60 * 60 * 24 ⟪hn⟫

EMAIL_HOST = "smtp.sendgrid.net"
EMAIL_HOST_USER = "apikey" ⟪hn⟫
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD") ⟪hn⟫
DEFAULT_FROM_EMAIL = "Billing <«email:email»>"
SESSION_COOKIE_NAME = "billing_session" ⟪hn⟫
CSRF_COOKIE_NAME = "billing_csrftoken" ⟪hn⟫
CELERY_BROKER_URL = "redis://:«url-credentials:url_password»@cache.internal:6379/1"
CELERY_RESULT_BACKEND = os.getenv("CELERY_RESULT_BACKEND", "redis://localhost:6379/2") ⟪hn⟫

STRIPE = {
    "secret_key": "«stripe-key:stripe»",
    "publishable_key": "«-:stripe_publishable»", ⟪hn⟫
    "webhook_secret": os.environ.get("STRIPE_WEBHOOK_SECRET", ""), ⟪hn⟫
}
'''

FILES["billing/clients.py"] = r'''"""Thin wrappers around the third-party APIs billing talks to."""
from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Optional

import openai
import requests
import stripe

stripe.api_key = "«stripe-key:stripe»"
client = openai.OpenAI(api_key="«openai-key:openai»")
TOKEN_URL = "https://oauth2.googleapis.com/token" ⟪hn⟫
MAILGUN_DOMAIN = "mg.acme-corp.com"


def send_receipt(to: str, html: str) -> None:
    requests.post(f"https://api.mailgun.net/v3/{MAILGUN_DOMAIN}/messages",
                  auth=("api", "«mailgun-key:mailgun»"),
                  data={"from": "«email:email»", "to": to, "html": html})


@dataclass
class Smtp:
    host: str = "smtp.mailgun.org"
    user: str = "«email:email»"
    password: str = "«secret-assignment:strong_password»"
    api_key: Optional[str] = None ⟪hn⟫


def login(username: str, password: str) -> bool: ⟪hn⟫
    digest = hashlib.sha256(password.encode()).hexdigest() ⟪hn⟫
    return hmac.compare_digest(digest, lookup(username)) ⟪hn⟫


def legacy_admin():
    password = "«secret-assignment:password»"
    return connect(host="10.0.0.5", user="admin", password=password) ⟪hn⟫


class Webhooks:
    def __init__(self, secret: str, token: str | None = None) -> None: ⟪hn⟫
        self.secret = secret ⟪hn⟫
        self.token = token or request_token() ⟪hn⟫
        self.signing_secret = "«secret-assignment:hex_secret»"

    def verify(self, body: bytes, signature: str) -> bool:
        expected = hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest() ⟪hn⟫
        return hmac.compare_digest(expected, signature)
'''

FILES["tests/test_clients.py"] = r'''import pytest

from billing.clients import Smtp, Webhooks, login

FAKE_TOKEN = "test-token" ⟪hn⟫
TEST_PASSWORD = "not-a-real-password" ⟪hn⟫
API_KEY = "dummy-api-key-for-tests" ⟪hn⟫
SIGNATURE = "«-:sha256»" ⟪hn⟫
REQUEST_ID = "«-:uuid4»" ⟪hn⟫


@pytest.fixture
def hooks():
    return Webhooks(secret="test-secret", token="fake-token") ⟪hn⟫


def test_login_rejects_wrong_password(db):
    assert not login("alice", password="wrong-password") ⟪hn⟫


def test_smtp_defaults():
    smtp = Smtp(password="x") ⟪hn⟫
    assert smtp.api_key is None


def test_stripe_docs_key(monkeypatch):
    monkeypatch.setattr("stripe.api_key", "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc") ⟪hn⟫
    hashed = "«-:bcrypt»" ⟪hn⟫
    assert check(hashed, "hunter2") is False ⟪hn⟫
'''

FILES["internal/config/config.go"] = r'''package config

import (
	"crypto/sha256"
	"os"
	"time"
)

// Config is loaded from the environment; the defaults below are for local runs only.
type Config struct {
	DSN        string        `json:"dsn"`
	Password   string        `json:"password" yaml:"password"` ⟪hn⟫
	APIKey     string        `json:"api_key"` ⟪hn⟫
	HMACSecret []byte        `json:"-"`
	Timeout    time.Duration `json:"timeout"`
}

const defaultDSN = "postgres://svc_billing:«url-credentials:url_password»@localhost:5432/billing?sslmode=disable"

var sessionKey = []byte("«secret-assignment:b64_secret»")

func Default() Config {
	return Config{
		DSN:        defaultDSN,
		APIKey:     "«secret-assignment:mixed32»",
		HMACSecret: []byte(os.Getenv("HMAC_SECRET")), ⟪hn⟫
		Timeout:    5 * time.Second,
	}
}

func FromEnv() Config {
	c := Default()
	c.Password = os.Getenv("DB_PASSWORD") ⟪hn⟫
	c.APIKey = os.Getenv("API_KEY") ⟪hn⟫
	return c
}

func Fingerprint(c Config) [32]byte {
	return sha256.Sum256([]byte(c.DSN))
}

const (
	slackHook   = "«slack-webhook:slack_webhook»"
	teamsHook   = "«teams-webhook:teams_webhook»"
	tokenHeader = "X-Auth-Token" ⟪hn⟫
	buildSHA    = "«-:sha1»" ⟪hn⟫
)

func init() {
	hmacSecret := "«secret-assignment:hex_secret»"
	_ = hmacSecret
	githubToken := "«github-token:github»"
	_ = githubToken
}
'''

FILES["web/src/config.ts"] = r'''import { z } from "zod";

export const firebaseConfig = {
  apiKey: "«google-api-key:google_api_key»",
  authDomain: "acme-billing.firebaseapp.com",
  projectId: "acme-billing",
  appId: "1:«-:digits12»:web:«-:hex24»", ⟪hn⟫
  measurementId: "«-:ga_id»", ⟪hn⟫
};

export const stripePublishableKey = "«-:stripe_publishable»"; ⟪hn⟫
export const mapboxToken = "«-:mapbox_public»"; ⟪hn⟫
const mapboxSecret = "«mapbox-token:mapbox_secret»";
const discordWebhook = "«discord-webhook:discord_webhook»";

const Env = z.object({
  API_URL: z.string().url(),
  API_TOKEN: z.string().min(20), ⟪hn⟫
});

export class ApiClient {
  constructor(private readonly apiSecret: string, private token?: string) {} ⟪hn⟫

  headers(): Record<string, string> {
    return { Authorization: `Bearer ${this.token}`, "X-Api-Secret": this.apiSecret }; ⟪hn⟫
  }
}

export const adminClient = new ApiClient(process.env.API_SECRET!); ⟪hn⟫
const clientSecret = "«secret-assignment:mixed32»";
const password = process.env.ADMIN_PASSWORD ?? ""; ⟪hn⟫
export const apiToken: string = "«secret-assignment:mixed40»";
const passwordPattern = /^(?=.*[A-Z])(?=.*\d).{12,}$/; ⟪hn⟫
const tokenStorageKey = "billing.auth.token"; ⟪hn⟫
export const groqKey = "«groq-key:groq»";
export const supportPhone = "«phone:phone»";
'''

FILES["deploy/gcp/service-account.json"] = r'''{
  "type": "service_account",
  "project_id": "acme-billing-prod",
  "private_key_id": "«gcp-service-account:hex40»",
  "private_key": "«private-key:pem_escaped»",
  "client_email": "billing-deployer@acme-billing-prod.iam.gserviceaccount.com", ⟪hn⟫
  "client_id": "«-:digits21»", ⟪hn⟫
  "auth_uri": "https://accounts.google.com/o/oauth2/auth",
  "token_uri": "https://oauth2.googleapis.com/token", ⟪hn⟫
  "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
  "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/billing-deployer%40acme-billing-prod.iam.gserviceaccount.com",
  "universe_domain": "googleapis.com"
}
'''

FILES["deploy/gcp/adc.json"] = r'''{
  "client_id": "«-:digits12»-«-:lower32».apps.googleusercontent.com", ⟪hn⟫
  "client_secret": "«google-oauth:gcp_oauth_secret»",
  "refresh_token": "«google-oauth:google_refresh»",
  "type": "authorized_user"
}
'''
