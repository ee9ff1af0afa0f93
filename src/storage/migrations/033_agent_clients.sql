-- migrate: foreign_keys=off
-- (The line above is the runner's opt-in, src/storage/db.ts FOREIGN_KEYS_OFF_MARKER: this file rebuilds
-- a table by SQLite's 12-step procedure, https://www.sqlite.org/lang_altertable.html#otheralter.)
--
-- Issue 36: AI agents register themselves as OAuth clients (RFC 7591 dynamic client registration,
-- or a client ID metadata document fetched from their https client_id) and become a kind of app the
-- owner sees and revokes: `kind = 'agent'`, no developer account, free, never listed. SQLite cannot
-- drop NOT NULL in place, so `apps` is rebuilt with the same columns plus `kind` and
-- `metadata_url`, its ids kept and its AUTOINCREMENT counter carried over (ids are never reused,
-- migration 006). References to apps(id) from other tables follow the rename.
--
-- Tokens and codes learn their audience (RFC 8707 resource indicators): `resource` is the address
-- the token was issued for (`{site_url}/mcp`, `{site_url}/api/v1`), NULL for tokens issued without one.
CREATE TABLE new_apps (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  developer_id     INTEGER REFERENCES owners(id) ON DELETE CASCADE,   -- NULL for agent clients
  name             TEXT NOT NULL,
  description      TEXT NOT NULL DEFAULT '',
  icon_url         TEXT,
  embed_url        TEXT,
  webhook_url      TEXT,
  webhook_events   TEXT NOT NULL DEFAULT '[]',
  redirect_uris    TEXT NOT NULL,
  client_id        TEXT NOT NULL UNIQUE,
  client_secret    TEXT NOT NULL,                    -- agent clients are public: a random value nobody knows
  webhook_secret   TEXT NOT NULL,
  status           TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'in_review', 'published')),
  terms            TEXT NOT NULL,
  published_terms  TEXT,
  published_at     TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  kind             TEXT NOT NULL DEFAULT 'app' CHECK (kind IN ('app', 'agent')),
  metadata_url     TEXT,                             -- client ID metadata document (= client_id), when that is how it came
  CHECK (kind = 'agent' OR developer_id IS NOT NULL)
);
INSERT INTO new_apps (id, developer_id, name, description, icon_url, embed_url, webhook_url, webhook_events, redirect_uris,
    client_id, client_secret, webhook_secret, status, terms, published_terms, published_at, created_at, updated_at)
  SELECT id, developer_id, name, description, icon_url, embed_url, webhook_url, webhook_events, redirect_uris,
    client_id, client_secret, webhook_secret, status, terms, published_terms, published_at, created_at, updated_at FROM apps;
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'new_apps', seq FROM sqlite_sequence WHERE name = 'apps'
  AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'new_apps');
UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'apps'), 0))
  WHERE name = 'new_apps';
DROP TABLE apps;
ALTER TABLE new_apps RENAME TO apps;
CREATE INDEX apps_by_developer ON apps(developer_id, id);
CREATE INDEX apps_published ON apps(status, id);

ALTER TABLE oauth_codes ADD COLUMN resource TEXT;
ALTER TABLE app_tokens ADD COLUMN resource TEXT;
