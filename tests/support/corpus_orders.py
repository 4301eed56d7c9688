"""The labelled corpus's second repository: an orders service, written by other hands than
the billing one (see ``corpus_repo`` for the template syntax)."""

from __future__ import annotations

FILES: dict[str, str] = {}

# -- an orders service: the same kinds of files, written by other hands ---------------------
FILES["orders/db.go"] = r'''package orders
import ("database/sql"; "net/http"; "os")
func open() (*sql.DB, error) {
	return sql.Open("postgres", "postgres://orders:«url-credentials:url_password»@10.1.2.3:5432/orders?sslmode=require")
}
func call(req *http.Request, token string) {
	req.Header.Set("Authorization", "Bearer "+token) ⟪hn⟫
	req.Header.Set("X-API-Key", "«secret-assignment:hex_secret»")
	req.SetBasicAuth("svc", os.Getenv("SVC_PASSWORD")) ⟪hn⟫
}
const webhookSecret = "«secret-assignment:hex_secret»"
var apiKey = flag.String("api-key", "", "API key for the upstream") ⟪hn⟫
var gitlabToken = "«gitlab-token:gitlab_pat»"
var cfg = Config{Password: "«secret-assignment:strong_password»", User: "orders"}
var tokenTTL = 15 * time.Minute ⟪hn⟫
'''
FILES["orders/app.py"] = r'''import os, psycopg2, redis, requests
conn = psycopg2.connect(host="db", user="app", password="«secret-assignment:strong_password»")
cache = redis.Redis(host="cache", port=6379, password="«secret-assignment:password»")
r = requests.get(URL, headers={"Authorization": f"Bearer {token}"}) ⟪hn⟫
r = requests.get(URL, headers={"X-Api-Key": "«secret-assignment:mixed32»"})
SECRET_KEY = os.environ.get("SECRET_KEY") ⟪hn⟫
api_key = settings.get("api_key") ⟪hn⟫
password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt()) ⟪hn⟫
client = MailchimpMarketing.Client(); client.set_config({"api_key": "«mailchimp-key:mailchimp»", "server": "us6"})
slack_url = "«slack-webhook:slack_webhook»"
maps_key = "«google-api-key:google_api_key»"
token_endpoint = "https://login.example.org/oauth2/token" ⟪hn⟫
checksum = "«-:sha256»" ⟪hn⟫
user_id = "«-:uuid4»" ⟪hn⟫
ds.setPassword("«secret-assignment:strong_password»")
os.environ["ORDERS_SERVICE_TOKEN"] = "«secret-assignment:mixed40»"
session.headers["X-Api-Key"] = "«secret-assignment:hex_secret»"
token = session.headers["X-Api-Key"] ⟪hn⟫
os.environ.setdefault("API_TOKEN", "«secret-assignment:mixed40»")
'''
FILES["web/src/api.ts"] = r'''import { Octokit } from "@octokit/rest";
const octokit = new Octokit({ auth: "«github-token:github»" });
export const config = { mailchimpApiKey: "«mailchimp-key:mailchimp»", region: "eu" };
const http = axios.create({ headers: { "x-api-key": process.env.API_KEY } }); ⟪hn⟫
const secret = process.env.JWT_SECRET || ""; ⟪hn⟫
export type Credentials = { username: string; password: string }; ⟪hn⟫
const demo: Credentials = { username: "demo", password: "«secret-assignment:strong_password»" };
const emptyPw = { password: "" }; ⟪hn⟫
const npmToken = "«npm-token:npm»";
const integrity = "«-:sri»"; ⟪hn⟫
'''
FILES["scripts/run.sh"] = r'''#!/bin/bash
docker run -d -e POSTGRES_PASSWORD=«secret-assignment:strong_password» -p 5432:5432 postgres:16
docker run -d -e POSTGRES_PASSWORD="$PG_PASSWORD" postgres:16 ⟪hn⟫
wget --user=admin --password=«secret-assignment:strong_password» https://files.acme.dev/dump.tgz
mysql --host=db --user=root --password=«secret-assignment:strong_password» < init.sql
mysql -uroot -p"${MYSQL_ROOT_PASSWORD}" < init.sql ⟪hn⟫
psql "postgresql://app:«url-credentials:url_password»@db:5432/app" -c 'select 1'
git push https://x-access-token:«github-token:github»@github.com/acme/orders.git HEAD:main
export NPM_TOKEN=«npm-token:npm»
echo "//registry.npmjs.org/:_authToken=${NPM_TOKEN}" > ~/.npmrc ⟪hn⟫
curl -s https://api.acme.dev/health | jq . ⟪hn⟫
ssh -i ~/.ssh/id_ed25519 deploy@10.0.0.7 ⟪hn⟫
'''
FILES[".github/workflows/ci.yml"] = r'''name: ci
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    services:
      postgres:
        image: postgres:16
        env:
          POSTGRES_PASSWORD: postgres ⟪hn⟫
    env:
      DATABASE_URL: postgres://postgres:postgres@localhost:5432/test ⟪hn⟫
      API_KEY: ${{ secrets.API_KEY }} ⟪hn⟫
      SENTRY_DSN: «-:sentry_dsn» ⟪hn⟫
    steps:
      - uses: actions/checkout@v4
      - uses: slackapi/slack-github-action@v1.26.0
        with:
          webhook-url: «slack-webhook:slack_webhook»
      - uses: some/deploy-action@v2
        with:
          api-key: «secret-assignment:hex_secret»
          token: ${{ github.token }} ⟪hn⟫
'''
FILES["charts/values.yaml"] = r'''mariadb:
  auth:
    rootPassword: "«secret-assignment:strong_password»"
    replicationPassword: "" ⟪hn⟫
    existingSecret: mariadb-creds ⟪hn⟫
app:
  secretKeyBase: «secret-assignment:hex_secret»
  smtpPassword: «secret-assignment:password»
  passwordMinLength: 12 ⟪hn⟫
  tokenIssuer: https://auth.acme.dev ⟪hn⟫
  gcp:
    private_key_id: «gcp-service-account:hex40»
'''
FILES["k8s/secret.yaml"] = r'''apiVersion: v1
kind: Secret
metadata:
  name: orders
type: Opaque
stringData:
  DB_USER: orders ⟪hn⟫
  DB_PASSWORD: «secret-assignment:strong_password»
  REDIS_URL: redis://:«url-credentials:url_password»@redis:6379/0
'''
FILES["orders/web/index.html"] = r'''<html><head>
<script src="https://maps.googleapis.com/maps/api/js?key=«google-api-key:google_api_key»"></script>
<script src="/static/app.js" integrity="«-:sri»"></script> ⟪hn⟫
<meta name="csrf-token" content="«-:hex_secret»"> ⟪hn⟫
<meta name="orders-api-key" content="«secret-assignment:mixed32»">
<meta name="google-site-verification" content="«-:mixed40»"> ⟪hn⟫
</head><body>
<img src="«-:png_data_uri»" alt=""> ⟪hn⟫
<label for="password">Password</label><input id="password" type="password" name="password"> ⟪hn⟫
<script>const STRIPE_PK = "«-:stripe_publishable»";</script> ⟪hn⟫
</body></html>
'''
FILES["wp-config.php"] = r'''<?php
define( 'DB_NAME', 'wordpress' );
define( 'DB_USER', 'wp' );
define( 'DB_PASSWORD', '«secret-assignment:strong_password»' );
define( 'AUTH_KEY', 'put your unique phrase here' ); ⟪hn⟫
$password = '«secret-assignment:strong_password»';
'''
FILES["frontend/.npmrc"] = r'''_auth=«secret-assignment:docker_auth»
email=«email:email»
'''

# -- the orders service's other half ---------------------------------------------------------
FILES["orders/config/settings.yaml"] = r'''server:
  port: 8443
  tls:
    certFile: /etc/tls/tls.crt ⟪hn⟫
    keyFile: /etc/tls/tls.key ⟪hn⟫
database:
  host: pg.prod.internal
  user: svc_orders
  pass: «secret-assignment:strong_password»
  password_file: /run/secrets/pg ⟪hn⟫
  sslmode: verify-full
queue:
  url: amqps://orders:«url-credentials:url_password»@mq.prod.internal:5671/orders
auth:
  jwtSecret: «secret-assignment:b64_secret»
  jwtPublicKey: /etc/keys/jwt.pub ⟪hn⟫
  oauth:
    clientId: orders-web ⟪hn⟫
    clientSecret: «secret-assignment:hex40»
    redirectUri: https://orders.acme.dev/callback ⟪hn⟫
integrations:
  sendgrid:
    apiKey: «sendgrid-key:sendgrid»
  slack:
    webhook: «slack-webhook:slack_webhook»
    channel: "#orders"
  gitlab:
    token: «gitlab-token:gitlab_pat»
    url: https://gitlab.acme.dev ⟪hn⟫
  google:
    mapsKey: «google-api-key:google_api_key»
  mailchimp:
    key: «mailchimp-key:mailchimp»
cache:
  keyPrefix: "orders:v2:" ⟪hn⟫
  ttlSeconds: 300
'''
FILES["orders/deploy/deploy.sh"] = r'''#!/usr/bin/env bash
set -eu
DB_PASS='«secret-assignment:strong_password»'
readonly API_TOKEN="«secret-assignment:mixed40»"
token=$(vault kv get -field=token secret/orders) ⟪hn⟫
export GITLAB_TOKEN="$(cat /run/secrets/gitlab)" ⟪hn⟫
psql "host=pg user=svc_orders password=«secret-assignment:strong_password» dbname=orders" -c 'select 1'
mysql --user=root --password="$ROOT_PW" orders < dump.sql ⟪hn⟫
mysql -u root -p«secret-assignment:password» orders < dump.sql
htpasswd -bc /etc/nginx/.htpasswd admin '«secret-assignment:strong_password»'
openssl req -x509 -newkey rsa:4096 -keyout key.pem -out cert.pem -passout pass:«secret-assignment:strong_password»
git clone https://«github-token:github»@github.com/acme/orders.git
curl -sf -H "PRIVATE-TOKEN: «gitlab-token:gitlab_pat»" https://gitlab.acme.dev/api/v4/projects
curl -sf -X POST -H 'Content-Type: application/json' -d '{"text":"deployed"}' «slack-webhook:slack_webhook»
echo "$KUBECONFIG_B64" | base64 -d > ~/.kube/config ⟪hn⟫
sha256sum -c checksums.txt ⟪hn⟫
'''
FILES["orders/src/server.ts"] = r'''import express from "express";
const app = express();
const SESSION_SECRET = process.env.SESSION_SECRET ?? "dev-only-secret"; ⟪hn⟫
const stripeSecret = "«stripe-key:stripe»";
const jwtSecret: string = "«secret-assignment:hex_secret»";
const password = "«secret-assignment:strong_password»";
const config = {
  db: { user: "orders", password: "«secret-assignment:strong_password»", host: "pg" },
  redis: { url: "redis://default:«url-credentials:url_password»@redis:6379" },
  npmToken: "«npm-token:npm»",
  tokenHeader: "x-orders-token", ⟪hn⟫
  passwordMinLength: 12, ⟪hn⟫
};
app.use((req, res, next) => { const token = req.header("authorization"); next(); }); ⟪hn⟫
export const hash = "«-:sha256»"; ⟪hn⟫
export const buildId = "«-:sha1»"; ⟪hn⟫
export const traceId = "«-:uuid4»"; ⟪hn⟫
'''
FILES["cmd/worker/main.go"] = r'''package main
var (
	redisPassword = "«secret-assignment:strong_password»"
	apiToken      = os.Getenv("API_TOKEN") ⟪hn⟫
	webhookSecret = []byte("«secret-assignment:hex_secret»")
	mailgunKey    = "«mailgun-key:mailgun»"
	dsn           = fmt.Sprintf("postgres://%s:%s@%s/orders", user, pass, host) ⟪hn⟫
	googleKey     = "«google-api-key:google_api_key»"
	sha           = "«-:sha1»" ⟪hn⟫
)
func auth() *http.Client {
	conf := &oauth2.Config{ClientID: "orders", ClientSecret: "«secret-assignment:hex40»", Endpoint: google.Endpoint}
	return conf.Client(ctx, tok) ⟪hn⟫
}
'''
FILES["app/tasks.py"] = r'''import os
from celery import Celery
app = Celery("orders", broker="amqp://orders:«url-credentials:url_password»@mq:5672//")
SLACK_WEBHOOK = os.getenv("SLACK_WEBHOOK_URL") ⟪hn⟫
smtp_password = "«secret-assignment:strong_password»"
api_secret = "«secret-assignment:hex_secret»"
token = None ⟪hn⟫
secret = os.urandom(32) ⟪hn⟫
key = hashlib.sha256(b"orders").hexdigest() ⟪hn⟫
password_field = "password" ⟪hn⟫
def get_token(): ⟪hn⟫
    return requests.post(TOKEN_URL, data={"grant_type": "client_credentials", "client_secret": "«secret-assignment:hex40»"}).json()
'''
FILES["orders/k8s/deploy.yaml"] = r'''apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: worker
          image: ghcr.io/acme/orders-worker@«-:docker_digest» ⟪hn⟫
          env:
            - name: GITLAB_TOKEN
              value: «gitlab-token:gitlab_pat»
            - name: SMTP_PASSWORD
              value: "«secret-assignment:strong_password»"
            - name: NODE_ENV
              value: production
            - name: API_KEY
              valueFrom:
                secretKeyRef: {name: orders, key: api-key} ⟪hn⟫
'''
FILES["charts/orders/values.yaml"] = r'''global:
  imageRegistry: ghcr.io
  imagePullSecrets: [ghcr-creds] ⟪hn⟫
postgresql:
  auth:
    password: «secret-assignment:strong_password»
    postgresPassword: ""
redis:
  password: «secret-assignment:strong_password»
ingress:
  annotations:
    nginx.ingress.kubernetes.io/auth-secret: orders-basic-auth ⟪hn⟫
secrets:
  webhookSecret: «secret-assignment:hex_secret»
  sentryAuthToken: «sentry-token:sentry»
  stripeKey: «stripe-key:stripe»
'''
FILES["orders/.github/workflows/deploy.yml"] = r'''on: push
jobs:
  deploy:
    runs-on: ubuntu-latest
    env:
      NPM_TOKEN: «npm-token:npm»
      GOOGLE_API_KEY: ${{ secrets.GOOGLE_API_KEY }} ⟪hn⟫
    steps:
      - run: echo "//registry.npmjs.org/:_authToken=$NPM_TOKEN" > ~/.npmrc ⟪hn⟫
      - run: curl -X POST "«slack-webhook:slack_webhook»" -d '{"text":"ok"}'
      - run: docker login ghcr.io -u acme-bot -p «github-token:github»
      - uses: azure/login@v2
        with:
          creds: '{"clientId":"«-:uuid4»","clientSecret":"«azure-client-secret:azure_client_secret»","tenantId":"«-:uuid4»"}'
'''
FILES["orders/public/app.html"] = r'''<!DOCTYPE html>
<html><head>
<script>
  window.ENV = { GOOGLE_MAPS_API_KEY: "«google-api-key:google_api_key»", SENTRY_DSN: "«-:sentry_dsn»" };
  firebase.initializeApp({ apiKey: "«google-api-key:google_api_key»", projectId: "orders-prod" });
</script>
<link rel="preload" href="/fonts/inter.woff2" as="font" crossorigin> ⟪hn⟫
<style>@font-face{font-family:x;src:url(«-:woff_data_uri»)}</style> ⟪hn⟫
</head><body data-token="{{ csrf_token }}"> ⟪hn⟫
<a href="https://orders.acme.dev/reset-password?token={{ token }}">Reset</a> ⟪hn⟫
</body></html>
'''
