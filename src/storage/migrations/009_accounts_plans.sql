-- Accounts, plans, subscriptions, entitlements and the wallet (docs/billing.md, api-v1 §4.8, §6, §8).
-- Money is integer minor units, as everywhere else. Timestamps are ISO 8601 strings (nowIso()).

-- An account is an owner row. Resellers are owners with role 'reseller'; an account a reseller
-- manages names it in reseller_id. A suspended account keeps its data; its tokens answer 403.
ALTER TABLE owners ADD COLUMN role TEXT NOT NULL DEFAULT 'owner' CHECK (role IN ('owner', 'reseller'));
ALTER TABLE owners ADD COLUMN reseller_id INTEGER REFERENCES owners(id) ON DELETE SET NULL;
ALTER TABLE owners ADD COLUMN suspended_at TEXT;
ALTER TABLE owners ADD COLUMN suspended_reason TEXT;
CREATE INDEX owners_by_reseller ON owners(reseller_id) WHERE reseller_id IS NOT NULL;

-- Plans. Platform plans (reseller_id NULL) are kept in step with the catalog in src/domain/plans.ts
-- at start-up (upsert by key); a reseller's own plans are built on a platform plan (base_plan_id),
-- whose wholesale price is the floor of the reseller's retail price.
CREATE TABLE plans (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  key              TEXT NOT NULL UNIQUE,          -- stable, e.g. 'free', 'growth', 'r12-gold'
  name             TEXT NOT NULL,
  reseller_id      INTEGER REFERENCES owners(id) ON DELETE CASCADE,
  base_plan_id     INTEGER REFERENCES plans(id),
  price            INTEGER NOT NULL CHECK (price >= 0),            -- per period, minor units
  wholesale_price  INTEGER NOT NULL DEFAULT 0 CHECK (wholesale_price >= 0), -- platform plans: what a reseller pays per active customer per period
  currency         TEXT NOT NULL DEFAULT 'USD',
  period_days      INTEGER NOT NULL DEFAULT 30 CHECK (period_days > 0),
  trial_days       INTEGER NOT NULL DEFAULT 0 CHECK (trial_days >= 0),
  features         TEXT NOT NULL DEFAULT '[]',   -- JSON array of feature keys (src/domain/plans.ts FEATURES)
  quotas           TEXT NOT NULL DEFAULT '{}',   -- JSON {kind: limit}; a kind that is absent is unlimited
  is_default       INTEGER NOT NULL DEFAULT 0,   -- the plan of an account that never chose one
  archived_at      TEXT,                          -- no new subscriptions; existing ones keep it
  created_at       TEXT NOT NULL
);
CREATE UNIQUE INDEX plans_one_default ON plans(is_default) WHERE is_default = 1;

-- One subscription per account at a time that is not over (expired/cancelled rows are history).
CREATE TABLE subscriptions (
  id                    INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id              INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  plan_id               INTEGER NOT NULL REFERENCES plans(id),
  status                TEXT NOT NULL CHECK (status IN ('trialing', 'active', 'past_due', 'paused', 'cancelled', 'expired')),
  current_period_start  TEXT NOT NULL,
  current_period_end    TEXT NOT NULL,
  trial_end             TEXT,
  cancel_at_period_end  INTEGER NOT NULL DEFAULT 0,
  pending_plan_id       INTEGER REFERENCES plans(id),  -- a downgrade that takes effect at period end
  past_due_since        TEXT,
  retry_count           INTEGER NOT NULL DEFAULT 0,
  next_retry_at         TEXT,
  paused_at             TEXT,
  ended_at              TEXT,
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL
);
CREATE UNIQUE INDEX subscriptions_one_live ON subscriptions(owner_id) WHERE status NOT IN ('cancelled', 'expired');
CREATE INDEX subscriptions_due ON subscriptions(status, current_period_end);

-- Scheduled billing work done, one row per (subscription, kind, period): the billing run inserts the
-- row in the same transaction as the work, so a run that is repeated or overlaps does nothing twice.
CREATE TABLE billing_runs (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  subscription_id  INTEGER NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
  kind             TEXT NOT NULL,   -- 'renewal', 'retry:1', 'expiry', 'reminder:expiring', 'reminder:trial_ending', ...
  period_key       TEXT NOT NULL,   -- the period it belongs to (its start, ISO 8601)
  done_at          TEXT NOT NULL,
  UNIQUE (subscription_id, kind, period_key)
);

-- Features an account holds, each with its source (api-v1 §6 entitlement.changed). A grant is a row;
-- revoking stamps revoked_at, so the history stays. Plan features are rows with source_type
-- 'subscription' and the subscription's id; add-ons 'addon', apps 'app', hand grants 'manual'.
CREATE TABLE entitlements (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id     INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  feature_key  TEXT NOT NULL,
  source_type  TEXT NOT NULL CHECK (source_type IN ('subscription', 'plan', 'addon', 'app', 'manual')),
  source_id    INTEGER,
  granted_at   TEXT NOT NULL,
  revoked_at   TEXT
);
CREATE INDEX entitlements_live ON entitlements(owner_id, feature_key) WHERE revoked_at IS NULL;

-- The wallet: a ledger per account. The balance is the sum of its entries and never below zero
-- (src/storage/wallet.ts checks inside the transaction that appends a debit).
CREATE TABLE wallet_entries (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id    INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  amount      INTEGER NOT NULL CHECK (amount <> 0),   -- credit > 0, debit < 0, minor units
  currency    TEXT NOT NULL DEFAULT 'USD',
  reason      TEXT NOT NULL,     -- 'top_up', 'subscription_renewal', 'plan_change_proration', 'app_fee', ...
  reference   TEXT,              -- e.g. 'subscription:9:2026-11-22T00:00:00.000+00:00'; unique per owner when set
  created_by  TEXT NOT NULL DEFAULT 'system',  -- 'cli', 'reseller:12', 'system'
  created_at  TEXT NOT NULL
);
CREATE INDEX wallet_by_owner ON wallet_entries(owner_id, id);
CREATE UNIQUE INDEX wallet_reference ON wallet_entries(owner_id, reference) WHERE reference IS NOT NULL;

-- Platform plans before the first start-up sync (src/domain/plans.ts is the source; these rows are
-- only here so the trigger below always finds a default plan).
INSERT INTO plans (key, name, price, wholesale_price, features, quotas, is_default, created_at)
  VALUES ('free', 'Free', 0, 0, '[]', '{}', 1, strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'));

-- Every account, however it is created (seed, CLI, reseller, tests), starts on the default plan:
-- a subscription and the plan's features as entitlements. No account is ever without a plan.
CREATE TRIGGER owners_start_on_default_plan AFTER INSERT ON owners
BEGIN
  INSERT INTO subscriptions (owner_id, plan_id, status, current_period_start, current_period_end, created_at, updated_at)
    SELECT NEW.id, p.id, 'active', NEW.created_at,
           strftime('%Y-%m-%dT%H:%M:%f+00:00', NEW.created_at, '+' || p.period_days || ' days'), NEW.created_at, NEW.created_at
    FROM plans p WHERE p.is_default = 1;
  INSERT INTO entitlements (owner_id, feature_key, source_type, source_id, granted_at)
    SELECT NEW.id, f.value, 'subscription', s.id, NEW.created_at
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id, json_each(p.features) f
    WHERE s.owner_id = NEW.id AND s.status = 'active';
END;

-- Accounts that exist already get the same start.
INSERT INTO subscriptions (owner_id, plan_id, status, current_period_start, current_period_end, created_at, updated_at)
  SELECT o.id, p.id, 'active', strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'), strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now', '+30 days'),
         strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'), strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')
  FROM owners o, plans p WHERE p.is_default = 1;
