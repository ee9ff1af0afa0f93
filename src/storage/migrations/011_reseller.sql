-- Resellers (api-v1 §4.8, docs/billing.md "Resellers"): the invoices the platform issues to a
-- reseller and the invoices a reseller issues to its customers. Both are numbered without gaps per
-- issuer and immutable once issued.

-- When the account became a reseller: the anchor of its 30-day invoice periods (period k is
-- [reseller_since + 30k days, reseller_since + 30(k+1) days)), so a reseller is never billed for
-- time before it was one.
ALTER TABLE owners ADD COLUMN reseller_since TEXT;

-- Gap-free numbering. Row ids may have gaps (AUTOINCREMENT never reuses an id), so an invoice's
-- number comes from this counter instead, incremented in the same transaction as the insert: a
-- transaction that rolls back rolls the counter back with it, so no number is ever skipped.
-- series: 'platform' (the platform's invoices to resellers), 'reseller:<id>' (a reseller's invoices
-- to its customers).
CREATE TABLE invoice_counters (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  series       TEXT NOT NULL UNIQUE,
  last_number  INTEGER NOT NULL CHECK (last_number >= 0)
);

-- What the platform bills a reseller for one period: per active customer the wholesale price of
-- the platform plan its plan is built on, less the volume tier discount (src/domain/reseller.ts).
-- One per reseller per period: the unique key makes the billing run idempotent.
CREATE TABLE reseller_invoices (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  reseller_id       INTEGER NOT NULL REFERENCES owners(id),
  seq               INTEGER NOT NULL UNIQUE,        -- from invoice_counters 'platform'
  number            TEXT NOT NULL UNIQUE,           -- 'P-000042'
  period_start      TEXT NOT NULL,
  period_end        TEXT NOT NULL,
  currency          TEXT NOT NULL,
  active_customers  INTEGER NOT NULL,
  tier              TEXT NOT NULL,
  discount_percent  INTEGER NOT NULL,
  lines             TEXT NOT NULL,                  -- JSON [{customer_id, plan_id, base_plan_key, wholesale}]
  subtotal          INTEGER NOT NULL,               -- minor units
  discount          INTEGER NOT NULL,
  total             INTEGER NOT NULL,
  issued_at         TEXT NOT NULL,
  UNIQUE (reseller_id, period_start)
);
CREATE INDEX reseller_invoices_by_reseller ON reseller_invoices(reseller_id, seq DESC);

-- What a reseller billed its customers: one per renewal of a customer's subscription on one of the
-- reseller's plans (the wallet debit of that renewal is the payment; wallet_entry_id is unique, so
-- the billing run issues each once).
CREATE TABLE customer_invoices (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  reseller_id      INTEGER NOT NULL REFERENCES owners(id),
  customer_id      INTEGER NOT NULL REFERENCES owners(id),
  subscription_id  INTEGER REFERENCES subscriptions(id),
  plan_id          INTEGER REFERENCES plans(id),
  wallet_entry_id  INTEGER NOT NULL UNIQUE REFERENCES wallet_entries(id),
  seq              INTEGER NOT NULL,                -- from invoice_counters 'reseller:<reseller_id>'
  number           TEXT NOT NULL,                   -- 'R12-000007'
  description      TEXT NOT NULL,
  amount           INTEGER NOT NULL,                -- minor units
  currency         TEXT NOT NULL,
  issued_at        TEXT NOT NULL,
  UNIQUE (reseller_id, seq)
);
CREATE INDEX customer_invoices_by_reseller ON customer_invoices(reseller_id, seq DESC);

-- Issued invoices are immutable (docs/billing.md "Resellers"): a correction is a new document,
-- never an edit. Every invoice is issued when it is inserted, so every row is protected.
CREATE TRIGGER reseller_invoices_immutable_update BEFORE UPDATE ON reseller_invoices
  WHEN OLD.issued_at IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'issued invoices are immutable');
END;
CREATE TRIGGER reseller_invoices_immutable_delete BEFORE DELETE ON reseller_invoices
  WHEN OLD.issued_at IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'issued invoices are immutable');
END;
CREATE TRIGGER customer_invoices_immutable_update BEFORE UPDATE ON customer_invoices
  WHEN OLD.issued_at IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'issued invoices are immutable');
END;
CREATE TRIGGER customer_invoices_immutable_delete BEFORE DELETE ON customer_invoices
  WHEN OLD.issued_at IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'issued invoices are immutable');
END;
