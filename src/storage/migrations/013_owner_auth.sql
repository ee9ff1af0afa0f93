-- Owner sign-in for the dashboard (issue 14; docs/dashboard.md "Signing in").
-- Passwords are scrypt hashes (src/auth/passwords.ts); an owner without one cannot sign in on the web.
ALTER TABLE owners ADD COLUMN password_hash TEXT;
ALTER TABLE owners ADD COLUMN email_verified_at TEXT;
-- Optional TOTP (RFC 6238), as the staff app: the secret once enrolment is confirmed, the one being
-- enrolled until then, and the last accepted time step (a code is never accepted twice).
ALTER TABLE owners ADD COLUMN totp_secret TEXT;
ALTER TABLE owners ADD COLUMN totp_pending TEXT;
ALTER TABLE owners ADD COLUMN totp_last_step INTEGER;
-- Sign-in is by email: at most one account with a password per address (case-insensitive).
-- Older rows without a password may share an address; sign-up refuses any address already taken.
CREATE UNIQUE INDEX owners_login_email ON owners(lower(email)) WHERE password_hash IS NOT NULL;

-- Server-side web sessions: the cookie `dsid` carries a random value, kept here only as SHA-256.
CREATE TABLE owner_sessions (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id      INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  token_hash    TEXT NOT NULL UNIQUE,
  -- The session's CSRF token: every state-changing request of the session must echo it.
  csrf          TEXT NOT NULL,
  via           TEXT NOT NULL CHECK (via IN ('password', 'handoff')),
  ip            TEXT NOT NULL DEFAULT '',
  user_agent    TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL,
  last_seen_at  TEXT NOT NULL,
  expires_at    TEXT NOT NULL,
  revoked_at    TEXT
);
CREATE INDEX owner_sessions_owner ON owner_sessions(owner_id, id);

-- Short-lived API tokens the dashboard gets for its session (docs/dashboard.md): ended with it,
-- left out of the api_tokens quota and of the owner's token list.
ALTER TABLE owner_tokens ADD COLUMN session_id INTEGER REFERENCES owner_sessions(id) ON DELETE CASCADE;
CREATE INDEX owner_tokens_session ON owner_tokens(session_id) WHERE session_id IS NOT NULL;

-- One-time links mailed to owners (email verification), hashed like every other secret.
CREATE TABLE owner_email_tokens (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id    INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  token_hash  TEXT NOT NULL UNIQUE,
  purpose     TEXT NOT NULL CHECK (purpose IN ('verify_email')),
  created_at  TEXT NOT NULL,
  expires_at  TEXT NOT NULL,
  used_at     TEXT
);
CREATE INDEX owner_email_tokens_owner ON owner_email_tokens(owner_id);

-- Removing a store (DELETE /restaurants/{id}, docs/stores.md "Removing a store"): the row stays, with
-- its orders and their history; a removed store is gone from every route, list, quota and search,
-- and its slug is not given to another store (old links never lead somewhere else).
ALTER TABLE stores ADD COLUMN deleted_at TEXT;
