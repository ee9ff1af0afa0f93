-- Staff app, kitchen display, storefront, coupons and the customer app (api-v1 §2.7, §3, §4.3,
-- §4.5, §4.7; docs/staff.md, docs/kds.md, docs/storefront.md, docs/customers.md).
-- Money in cents, timestamps ISO 8601 UTC, secrets hashed (ARCHITECTURE "Storage").

-- Two-factor (RFC 6238): the secret waits in totp_pending until a first code confirms it; the
-- last accepted time step is kept so one code cannot be used twice (RFC 6238 §5.2).
ALTER TABLE staff ADD COLUMN totp_pending TEXT;
ALTER TABLE staff ADD COLUMN totp_last_step INTEGER;

-- PINs are hashed with one salt per store, so a PIN login costs one slow hash, not one per staff
-- member (src/auth/staff.ts). Created on first use.
CREATE TABLE staff_pin_salts (
  store_id  INTEGER PRIMARY KEY REFERENCES stores(id) ON DELETE CASCADE,
  salt      TEXT NOT NULL
);

-- One token per staff member and device; logout revokes only the token it was sent with.
CREATE TABLE staff_tokens (
  id          INTEGER PRIMARY KEY,
  staff_id    INTEGER NOT NULL REFERENCES staff(id) ON DELETE CASCADE,
  token_hash  TEXT NOT NULL UNIQUE,
  device      TEXT NOT NULL,
  method      TEXT NOT NULL CHECK (method IN ('password', 'pin')),
  created_at  TEXT NOT NULL,
  revoked_at  TEXT
);
CREATE INDEX staff_tokens_staff ON staff_tokens(staff_id, device);

-- Wrong-PIN counters per store and device (and the store-wide row with device = '*').
CREATE TABLE staff_pin_failures (
  store_id      INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  device        TEXT NOT NULL,
  failures      INTEGER NOT NULL DEFAULT 0,
  window_start  TEXT NOT NULL,
  locked_until  TEXT,
  PRIMARY KEY (store_id, device)
);

CREATE TABLE staff_devices (
  id            INTEGER PRIMARY KEY,
  staff_id      INTEGER NOT NULL REFERENCES staff(id) ON DELETE CASCADE,
  device_token  TEXT NOT NULL UNIQUE,
  platform      TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX staff_devices_staff ON staff_devices(staff_id);

-- Third-party order integration controls per store (busy: longer prep times; snooze: pause).
CREATE TABLE store_integration (
  store_id            INTEGER PRIMARY KEY REFERENCES stores(id) ON DELETE CASCADE,
  busy_until          TEXT,
  extra_prep_minutes  INTEGER NOT NULL DEFAULT 0,
  snoozed_until       TEXT,
  updated_at          TEXT NOT NULL
);

-- Coupons (docs/storefront.md "Coupons"): code unique per store, case-insensitive (stored upper).
CREATE TABLE coupons (
  id           INTEGER PRIMARY KEY,
  store_id     INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  code         TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('percent', 'fixed')),
  value        INTEGER NOT NULL,             -- percent: 1..100; fixed: cents
  min_order    INTEGER NOT NULL DEFAULT 0,   -- cents of subtotal
  starts_at    TEXT,
  ends_at      TEXT,
  usage_limit  INTEGER,                      -- NULL: unlimited
  uses         INTEGER NOT NULL DEFAULT 0,
  active       INTEGER NOT NULL DEFAULT 1,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  UNIQUE (store_id, code)
);

CREATE TABLE coupon_redemptions (
  id          INTEGER PRIMARY KEY,
  coupon_id   INTEGER NOT NULL REFERENCES coupons(id) ON DELETE CASCADE,
  order_id    INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  discount    INTEGER NOT NULL,
  created_at  TEXT NOT NULL
);
CREATE INDEX coupon_redemptions_coupon ON coupon_redemptions(coupon_id);

-- Customer app: one token per device, individually revocable (api-v1 §5).
CREATE TABLE customer_tokens (
  id           INTEGER PRIMARY KEY,
  customer_id  INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
  token_hash   TEXT NOT NULL UNIQUE,
  device       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  revoked_at   TEXT
);
CREATE INDEX customer_tokens_customer ON customer_tokens(customer_id, device);

-- SMS one-time codes: only a salted hash of the code; short-lived, single use, few attempts.
CREATE TABLE customer_otps (
  id          INTEGER PRIMARY KEY,
  store_id    INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  phone       TEXT NOT NULL,
  code_hash   TEXT NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0,
  expires_at  TEXT NOT NULL,
  used_at     TEXT,
  created_at  TEXT NOT NULL
);
CREATE INDEX customer_otps_phone ON customer_otps(store_id, phone, id DESC);

CREATE TABLE customer_addresses (
  id           INTEGER PRIMARY KEY,
  customer_id  INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
  label        TEXT,
  address      TEXT NOT NULL,
  lat          REAL,
  lng          REAL,
  notes        TEXT,
  is_default   INTEGER NOT NULL DEFAULT 0,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
CREATE INDEX customer_addresses_customer ON customer_addresses(customer_id, id);

-- Balances are ledgers: the balance is the sum of the entries, never a mutable number.
CREATE TABLE gift_cards (
  id           INTEGER PRIMARY KEY,
  store_id     INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  customer_id  INTEGER REFERENCES customers(id) ON DELETE SET NULL,
  code_hash    TEXT NOT NULL UNIQUE,
  code_last4   TEXT NOT NULL,
  expires_at   TEXT,
  created_at   TEXT NOT NULL
);
CREATE INDEX gift_cards_customer ON gift_cards(customer_id);

CREATE TABLE gift_card_entries (
  id            INTEGER PRIMARY KEY,
  gift_card_id  INTEGER NOT NULL REFERENCES gift_cards(id) ON DELETE CASCADE,
  amount        INTEGER NOT NULL,             -- cents; + issue/top-up, - redemption
  reason        TEXT NOT NULL,
  order_id      INTEGER,
  created_at    TEXT NOT NULL
);
CREATE INDEX gift_card_entries_card ON gift_card_entries(gift_card_id);

CREATE TABLE store_credit_entries (
  id           INTEGER PRIMARY KEY,
  store_id     INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  customer_id  INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
  amount       INTEGER NOT NULL,              -- cents; + credit, - spend
  reason       TEXT NOT NULL,
  order_id     INTEGER,
  created_at   TEXT NOT NULL
);
CREATE INDEX store_credit_customer ON store_credit_entries(customer_id, id DESC);

CREATE INDEX orders_customer ON orders(customer_id, id DESC);
