-- Third-party apps (api-v1 §4.10, §5, §9 rule 4; docs/apps.md): developers' apps and their review,
-- installations with granted scopes, the OAuth 2.0 code flow (codes, access and refresh tokens),
-- usage records and recurring charges through the wallet. Token-like values (codes, access and
-- refresh tokens) are kept as SHA-256 only. The client secret and the webhook secret are HMAC keys
-- (session tokens are HS256 JWTs signed with the client secret; app deliveries are signed with the
-- whsec_ secret), so like webhook endpoints' secrets they must be kept usable, not hashed.

CREATE TABLE apps (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  developer_id     INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  name             TEXT NOT NULL,
  description      TEXT NOT NULL DEFAULT '',
  icon_url         TEXT,
  embed_url        TEXT,
  webhook_url      TEXT,
  webhook_events   TEXT NOT NULL DEFAULT '[]',       -- JSON array of event names the app wants
  redirect_uris    TEXT NOT NULL,                    -- JSON array; exact match only
  client_id        TEXT NOT NULL UNIQUE,
  client_secret    TEXT NOT NULL,                    -- raw: the HS256 key of session tokens; compared in constant time
  webhook_secret   TEXT NOT NULL,                    -- whsec_<base64>
  -- Review (§9 rule 4): 'draft' → 'in_review' → 'published'. Terms are what installs agree to:
  -- {scopes: [...], pricing: 'free'|'recurring'|'usage', price: minor units, cap: minor units|null,
  --  currency}. `terms` is the developer's current version; `published_terms` what the marketplace
  -- and new installs see. A change of price or scopes after publication puts the app back in review
  -- (published_terms stay until approved); metadata changes publish at once.
  status           TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'in_review', 'published')),
  terms            TEXT NOT NULL,
  published_terms  TEXT,
  published_at     TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX apps_by_developer ON apps(developer_id, id);
CREATE INDEX apps_published ON apps(status, id);

-- One installation per app and account while active; the terms (scopes granted, price) are the
-- published terms at consent, kept until the owner re-consents.
CREATE TABLE app_installations (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  app_id           INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  owner_id         INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  scopes           TEXT NOT NULL,                    -- JSON array of granted scopes
  terms            TEXT NOT NULL,                    -- JSON: the terms agreed to
  status           TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'uninstalled')),
  installed_at     TEXT NOT NULL,
  uninstalled_at   TEXT
);
CREATE UNIQUE INDEX app_installations_active ON app_installations(app_id, owner_id) WHERE status = 'active';
CREATE INDEX app_installations_by_owner ON app_installations(owner_id, status);

-- Authorization codes: single use, minutes-long; a second redemption revokes what the first issued.
CREATE TABLE oauth_codes (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  code_hash        TEXT NOT NULL UNIQUE,
  app_id           INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  installation_id  INTEGER NOT NULL REFERENCES app_installations(id) ON DELETE CASCADE,
  redirect_uri     TEXT NOT NULL,
  scopes           TEXT NOT NULL,                    -- JSON array
  code_challenge   TEXT,                             -- S256 challenge, when PKCE was used
  created_at       TEXT NOT NULL,
  expires_at       TEXT NOT NULL,
  used_at          TEXT
);

-- App tokens: bearer access tokens on /api/v1 (prefix per src/auth/tokens.ts) and rotating refresh
-- tokens. `grant_id` ties every token issued from one code together, so a replayed code or a reused
-- refresh token revokes the whole grant.
CREATE TABLE app_tokens (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  token_hash       TEXT NOT NULL UNIQUE,
  kind             TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  installation_id  INTEGER NOT NULL REFERENCES app_installations(id) ON DELETE CASCADE,
  grant_id         INTEGER NOT NULL REFERENCES oauth_codes(id) ON DELETE CASCADE,
  scopes           TEXT NOT NULL,                    -- JSON array
  created_at       TEXT NOT NULL,
  expires_at       TEXT,
  used_at          TEXT,                             -- refresh tokens: rotated (a second use revokes the grant)
  revoked_at       TEXT
);
CREATE INDEX app_tokens_by_installation ON app_tokens(installation_id);
CREATE INDEX app_tokens_by_grant ON app_tokens(grant_id);

-- Session tokens are stateless JWTs (60 s); the ids of those issued are kept so uninstalling can
-- list them and an app can be told a jti was revoked.
CREATE TABLE app_session_tokens (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  jti              TEXT NOT NULL UNIQUE,
  installation_id  INTEGER NOT NULL REFERENCES app_installations(id) ON DELETE CASCADE,
  owner_session_id INTEGER,
  issued_at        TEXT NOT NULL,
  expires_at       TEXT NOT NULL,
  revoked_at       TEXT
);
CREATE INDEX app_session_tokens_by_installation ON app_session_tokens(installation_id);

-- Usage reports (POST /api/app/usage): one row per report; a repeated ref of one installation is
-- the same report (nothing charged twice). `amount` is what was charged (minor units, after the cap).
CREATE TABLE app_usage (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  installation_id  INTEGER NOT NULL REFERENCES app_installations(id) ON DELETE CASCADE,
  quantity         REAL NOT NULL CHECK (quantity > 0),
  ref              TEXT,
  amount           INTEGER NOT NULL,
  wallet_entry_id  INTEGER REFERENCES wallet_entries(id),
  period_start     TEXT NOT NULL,
  created_at       TEXT NOT NULL
);
CREATE UNIQUE INDEX app_usage_ref ON app_usage(installation_id, ref) WHERE ref IS NOT NULL;
CREATE INDEX app_usage_period ON app_usage(installation_id, period_start);

-- Recurring charges: one per installation and period, whatever runs the billing (catch-up safe).
CREATE TABLE app_charges (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  installation_id  INTEGER NOT NULL REFERENCES app_installations(id) ON DELETE CASCADE,
  period_start     TEXT NOT NULL,
  amount           INTEGER NOT NULL,
  wallet_entry_id  INTEGER REFERENCES wallet_entries(id),
  result           TEXT NOT NULL CHECK (result IN ('charged', 'unpaid')),
  created_at       TEXT NOT NULL,
  UNIQUE (installation_id, period_start)
);

-- App deliveries (api-v1 §6 "App webhook deliveries"; docs/apps.md "Uninstall and webhooks") ride the
-- webhook machinery (endpoint actors, SSRF-guarded client, retries, attempt log): an app with a
-- webhook URL has one webhook_endpoints row tagged with its app_id (owned by the developer, url and
-- events and whsec_ secret copied from the app). Such rows are not the developer's own endpoints:
-- the endpoint API, its quota and the developer's fan-out leave them out; events reach them only from
-- accounts with an active installation of the app (src/storage/webhooks.ts fanout).
ALTER TABLE webhook_endpoints ADD COLUMN app_id INTEGER REFERENCES apps(id) ON DELETE CASCADE;
CREATE UNIQUE INDEX webhook_endpoints_app ON webhook_endpoints(app_id) WHERE app_id IS NOT NULL;
