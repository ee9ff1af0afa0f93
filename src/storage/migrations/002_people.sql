-- Staff and customers are per store (api-v1 §2.7, §4.5, §4.7). Passwords and PINs: slow hashes only.

CREATE TABLE staff (
  id             INTEGER PRIMARY KEY,
  store_id       INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  name           TEXT NOT NULL,
  email          TEXT NOT NULL,
  role           TEXT NOT NULL CHECK (role IN ('manager', 'cashier', 'kitchen', 'waiter')),
  password_hash  TEXT NOT NULL,
  pin_hash       TEXT,
  permissions    TEXT,                -- JSON {"grant": [...], "revoke": [...]} overrides of the role defaults
  station        TEXT,                -- KDS station this member works, if any
  totp_secret    TEXT,                -- base32, set once two-factor is confirmed
  created_at     TEXT NOT NULL,
  UNIQUE (store_id, email)
);

CREATE TABLE customers (
  id             INTEGER PRIMARY KEY,
  store_id       INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  name           TEXT,
  email          TEXT,
  phone          TEXT,
  password_hash  TEXT,
  birthday       TEXT,
  consents       TEXT NOT NULL DEFAULT '{}',
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);
CREATE UNIQUE INDEX customers_store_email ON customers(store_id, email) WHERE email IS NOT NULL;
CREATE INDEX customers_store_phone ON customers(store_id, phone);
