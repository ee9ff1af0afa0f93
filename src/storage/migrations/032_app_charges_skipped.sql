-- migrate: foreign_keys=off
-- (The line above is the runner's opt-in, src/storage/db.ts FOREIGN_KEYS_OFF_MARKER: this file rebuilds
-- a table by SQLite's 12-step procedure, https://www.sqlite.org/lang_altertable.html#otheralter.)
--
-- A recurring app period that comes due while the installing account's plan lacks `apps` is not
-- charged: the billing run records it `skipped` (src/billing/app-charges.ts; docs/apps.md "When the
-- plan lacks apps"), so no later run charges it once the feature is back, unless the feature comes
-- back before the period ends. SQLite cannot change a CHECK in place, so app_charges is rebuilt with
-- the same columns, UNIQUE and index, its ids kept and its AUTOINCREMENT counter carried over (ids
-- are never reused, migration 006). No table references app_charges.
CREATE TABLE new_app_charges (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  installation_id  INTEGER NOT NULL REFERENCES app_installations(id) ON DELETE CASCADE,
  period_start     TEXT NOT NULL,
  amount           INTEGER NOT NULL,
  wallet_entry_id  INTEGER REFERENCES wallet_entries(id),
  result           TEXT NOT NULL CHECK (result IN ('charged', 'unpaid', 'skipped')),
  created_at       TEXT NOT NULL,
  UNIQUE (installation_id, period_start)
);
INSERT INTO new_app_charges (id, installation_id, period_start, amount, wallet_entry_id, result, created_at)
  SELECT id, installation_id, period_start, amount, wallet_entry_id, result, created_at FROM app_charges;
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'new_app_charges', seq FROM sqlite_sequence WHERE name = 'app_charges'
  AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'new_app_charges');
UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'app_charges'), 0))
  WHERE name = 'new_app_charges';
DROP TABLE app_charges;
ALTER TABLE new_app_charges RENAME TO app_charges;
CREATE INDEX app_charges_wallet_entry ON app_charges(wallet_entry_id) WHERE wallet_entry_id IS NOT NULL;
