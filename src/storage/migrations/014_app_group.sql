-- The app group (api-v1 §4.9, docs/app-shell.md): the owner's mobile shell app signs in with the
-- owner's email and password and gets a shell token per device; it registers push devices and asks
-- for one-time handoff nonces that open a web session in its web view. Secrets are kept as SHA-256.

-- Shell tokens (`dsh_…`): one live token per owner and device; signing in again on the same device
-- revokes the earlier one. They authenticate only the /app routes, never the rest of /api/v1.
CREATE TABLE shell_tokens (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id      INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  token_hash    TEXT NOT NULL UNIQUE,
  -- The installation's own id (stable per install), its display name, platform and shell version.
  device        TEXT NOT NULL,
  device_name   TEXT NOT NULL DEFAULT '',
  platform      TEXT NOT NULL,               -- 'ios' | 'android'
  app_version   TEXT,
  created_at    TEXT NOT NULL,
  expires_at    TEXT NOT NULL,
  revoked_at    TEXT
);
CREATE INDEX shell_tokens_owner_device ON shell_tokens(owner_id, device);

-- Push registrations of shell devices. A push token belongs to one installation, so registering it
-- again (even by another account after a sign-out and sign-in) moves it; unregistering or signing
-- out of the device deletes it.
CREATE TABLE shell_push_devices (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id        INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  shell_token_id  INTEGER NOT NULL REFERENCES shell_tokens(id) ON DELETE CASCADE,
  push_token      TEXT NOT NULL UNIQUE,
  platform        TEXT NOT NULL,             -- 'ios' | 'android'
  created_at      TEXT NOT NULL
);
CREATE INDEX shell_push_devices_token ON shell_push_devices(shell_token_id);

-- Handoff nonces: single use, 60 seconds. Only the SHA-256 is kept; `used_at` is set by the one
-- redemption that wins, and the web session it started is remembered so signing the device out
-- ends that session too.
CREATE TABLE shell_handoffs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id        INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  shell_token_id  INTEGER NOT NULL REFERENCES shell_tokens(id) ON DELETE CASCADE,
  nonce_hash      TEXT NOT NULL UNIQUE,
  created_at      TEXT NOT NULL,
  expires_at      TEXT NOT NULL,
  used_at         TEXT,
  session_id      INTEGER
);
CREATE INDEX shell_handoffs_token ON shell_handoffs(shell_token_id);
