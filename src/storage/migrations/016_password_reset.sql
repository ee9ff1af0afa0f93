-- Password reset links (issue 20 item 4: email for sign-up, verification and password reset;
-- docs/dashboard.md "Forgotten password"). One-time email links gain the purpose
-- 'reset_password'. SQLite cannot change a CHECK in place, so the table is rebuilt; its
-- AUTOINCREMENT counter is carried over so no link id is ever reused.
ALTER TABLE owner_email_tokens RENAME TO owner_email_tokens_old;
DROP INDEX IF EXISTS owner_email_tokens_owner;

CREATE TABLE owner_email_tokens (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id    INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  token_hash  TEXT NOT NULL UNIQUE,
  purpose     TEXT NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
  created_at  TEXT NOT NULL,
  expires_at  TEXT NOT NULL,
  used_at     TEXT
);
INSERT INTO owner_email_tokens (id, owner_id, token_hash, purpose, created_at, expires_at, used_at)
  SELECT id, owner_id, token_hash, purpose, created_at, expires_at, used_at FROM owner_email_tokens_old;
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'owner_email_tokens', seq FROM sqlite_sequence WHERE name = 'owner_email_tokens_old'
  AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'owner_email_tokens');
UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'owner_email_tokens_old'), 0))
  WHERE name = 'owner_email_tokens';
DROP TABLE owner_email_tokens_old;
CREATE INDEX owner_email_tokens_owner ON owner_email_tokens(owner_id);
CREATE INDEX owner_email_tokens_reset ON owner_email_tokens(owner_id, purpose, created_at);
