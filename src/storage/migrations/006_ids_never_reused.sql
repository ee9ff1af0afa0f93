-- migrate: foreign_keys=off
-- (The line above is the runner's opt-in, src/storage/db.ts FOREIGN_KEYS_OFF_MARKER: this file rebuilds
-- tables, and with enforcement on every DROP TABLE below would cascade into the tables that reference it.)
--
-- Ids that leave the server are never handed out again (issue 10 #2). Without AUTOINCREMENT SQLite
-- gives a new row max(id)+1, so deleting the newest driver made the next driver of ANY owner get its
-- id, and with it every order, delivery and earning still pointing at that id. Every table whose id is
-- generated gets AUTOINCREMENT (ids then come from sqlite_sequence and only ever grow,
-- https://www.sqlite.org/autoinc.html), and references to deletable rows get foreign keys with an
-- ON DELETE rule, so nothing keeps pointing at a row that is gone.
--
-- Each table is rebuilt by SQLite's 12-step procedure (https://www.sqlite.org/lang_altertable.html#otheralter):
-- create new_X, copy every row with its id, drop X, rename new_X to X, recreate X's indexes. Columns,
-- defaults, CHECKs, UNIQUEs and indexes are exactly those of migrations 001-005; what changes is
-- AUTOINCREMENT and the foreign keys marked "new in 006". References inside new_X name X itself (never
-- new_X), so the rename rewrites nothing whatever PRAGMA legacy_alter_table says
-- (test/unit/migration-autoincrement.test.ts checks both settings). The runner checks
-- PRAGMA foreign_key_check before this commits.
--
-- Not rebuilt: tables whose primary key is not a generated id (idempotency_keys, deliveries,
-- staff_pin_salts, staff_pin_failures, store_integration: keyed by another row's id or a name) and
-- the one-row webhook_cursor. References left without a foreign key on purpose:
--   order_lines.item_id / variant_id and the extras' ids: an order keeps its history when the menu
--     changes (001); AUTOINCREMENT on the menu tables is what keeps those ids from naming a new item.
--   outbox.owner_id / store_id, webhook_endpoints.from_event_id, webhook_deliveries.event_id: log
--     positions and the event log itself, never rewritten.
--   idempotency_keys.order_id: an order is only ever deleted with its store (the key then answers
--     404, src/actors/store.ts), and a foreign key would cost an index write on every order insert.

-- 1. Floors for the new sequences, taken before anything is cleaned up: the highest id each table
--    ever handed out as far as the database still knows (its rows, the rows referring to it, the
--    events that carried it out in webhooks). A deleted newest row leaves traces only there.
CREATE TEMP TABLE id_floor_seen (name TEXT NOT NULL, seq INTEGER);
INSERT INTO temp.id_floor_seen (name, seq)
  SELECT 'drivers', MAX(driver_id) FROM orders
  UNION ALL SELECT 'drivers', MAX(driver_id) FROM delivery_offers
  UNION ALL SELECT 'customers', MAX(customer_id) FROM orders
  UNION ALL SELECT 'customers', MAX(customer_id) FROM gift_cards
  UNION ALL SELECT 'customers', MAX(customer_id) FROM store_credit_entries
  UNION ALL SELECT 'menu_items', MAX(item_id) FROM order_lines
  UNION ALL SELECT 'item_variants', MAX(variant_id) FROM order_lines
  UNION ALL SELECT 'item_extras', MAX(CAST(json_extract(e.value, '$.id') AS INTEGER))
    FROM (SELECT extras FROM order_lines WHERE json_valid(extras)) l, json_each(l.extras) e
  UNION ALL SELECT 'orders', MAX(order_id) FROM idempotency_keys
  UNION ALL SELECT 'orders', MAX(order_id) FROM gift_card_entries
  UNION ALL SELECT 'orders', MAX(order_id) FROM store_credit_entries
  UNION ALL SELECT 'stores', MAX(store_id) FROM delivery_offers
  UNION ALL SELECT 'stores', MAX(store_id) FROM outbox
  UNION ALL SELECT 'owners', MAX(owner_id) FROM outbox
  UNION ALL SELECT 'outbox', last_event_id FROM webhook_cursor
  UNION ALL SELECT 'outbox', MAX(from_event_id) FROM webhook_endpoints
  UNION ALL SELECT 'outbox', MAX(event_id) FROM webhook_deliveries;
-- Ids in event payloads (api-v1 §6): what webhook receivers have seen.
INSERT INTO temp.id_floor_seen (name, seq)
  SELECT 'drivers', MAX(CAST(json_extract(data, '$.driver_id') AS INTEGER)) FROM outbox WHERE json_valid(data)
  UNION ALL SELECT 'customers', MAX(CAST(json_extract(data, '$.customer_id') AS INTEGER)) FROM outbox WHERE json_valid(data)
  UNION ALL SELECT 'orders', MAX(CAST(json_extract(data, '$.order_id') AS INTEGER)) FROM outbox WHERE json_valid(data)
  UNION ALL SELECT CASE json_extract(data, '$.entity') WHEN 'category' THEN 'menu_categories' WHEN 'item' THEN 'menu_items' ELSE 'item_variants' END,
      MAX(CAST(json_extract(data, '$.id') AS INTEGER))
    FROM outbox WHERE event = 'menu.updated' AND json_valid(data) AND json_extract(data, '$.entity') IN ('category', 'item', 'variant')
    GROUP BY json_extract(data, '$.entity');
-- When each order was last given a driver (order.driver_assigned is emitted by every assignment and claim).
CREATE TEMP TABLE last_assigned (order_id INTEGER PRIMARY KEY, at TEXT NOT NULL);
INSERT INTO temp.last_assigned (order_id, at)
  SELECT CAST(json_extract(data, '$.order_id') AS INTEGER), MAX(created_at)
  FROM outbox WHERE event = 'order.driver_assigned' AND json_valid(data) GROUP BY 1;

-- 2. References that already point at the wrong row. orders.driver_id had no foreign key, so an order
--    may name a deleted driver, or a later driver that was handed the deleted one's id: one of another
--    owner (the cross-account leak), or one created after the order was last assigned. Those orders
--    lose the driver; one still in progress goes back to the pool (delivery_status pending, as the
--    owner's `pending` override does, docs/drivers.md) for the dispatcher to assign again.
UPDATE orders SET
  driver_id = NULL,
  delivery_status = CASE WHEN delivery_status IN ('assigned', 'picked_up', 'out_for_delivery') THEN 'pending' ELSE delivery_status END
WHERE driver_id IS NOT NULL AND NOT EXISTS (
  SELECT 1 FROM drivers d JOIN stores s ON s.id = orders.store_id
  WHERE d.id = orders.driver_id AND d.owner_id = s.owner_id
    AND d.created_at <= COALESCE(
      (SELECT at FROM temp.last_assigned a WHERE a.order_id = orders.id),
      json_extract(orders.timeline, '$.assigned_at'),
      d.created_at)
);
DROP TABLE temp.last_assigned;
UPDATE orders SET customer_id = NULL WHERE customer_id IS NOT NULL AND customer_id NOT IN (SELECT id FROM customers);
UPDATE gift_card_entries SET order_id = NULL WHERE order_id IS NOT NULL AND order_id NOT IN (SELECT id FROM orders);
UPDATE store_credit_entries SET order_id = NULL WHERE order_id IS NOT NULL AND order_id NOT IN (SELECT id FROM orders);
DELETE FROM delivery_offers WHERE store_id NOT IN (SELECT id FROM stores);

-- 3. The rebuilds, in the order of migrations 001-005.

-- 001_core.sql ------------------------------------------------------------------------------------

CREATE TABLE new_owners (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT NOT NULL,
  email       TEXT NOT NULL,
  created_at  TEXT NOT NULL
);
INSERT INTO new_owners (id, name, email, created_at) SELECT id, name, email, created_at FROM owners;
DROP TABLE owners;
ALTER TABLE new_owners RENAME TO owners;

-- Owner/reseller API tokens (api-v1 §5): only the SHA-256 of the token is kept.
CREATE TABLE new_owner_tokens (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id      INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  token_hash    TEXT NOT NULL UNIQUE,
  token_prefix  TEXT NOT NULL,             -- first characters, to recognise a token in lists
  name          TEXT NOT NULL DEFAULT '',
  capabilities  TEXT NOT NULL,             -- JSON array, e.g. ["*"] or ["orders:read","menu:write"]
  expires_at    TEXT,
  revoked_at    TEXT,
  created_at    TEXT NOT NULL
);
INSERT INTO new_owner_tokens (id, owner_id, token_hash, token_prefix, name, capabilities, expires_at, revoked_at, created_at)
  SELECT id, owner_id, token_hash, token_prefix, name, capabilities, expires_at, revoked_at, created_at FROM owner_tokens;
DROP TABLE owner_tokens;
ALTER TABLE new_owner_tokens RENAME TO owner_tokens;
CREATE INDEX owner_tokens_owner ON owner_tokens(owner_id);

CREATE TABLE new_stores (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id     INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  title        TEXT NOT NULL,
  slug         TEXT NOT NULL UNIQUE,
  template     TEXT NOT NULL DEFAULT 'classic',
  store_type   TEXT NOT NULL DEFAULT 'restaurant',
  currency     TEXT NOT NULL DEFAULT 'USD',
  city         TEXT,
  settings     TEXT NOT NULL DEFAULT '{}',  -- JSON: business hours, delivery fee, prep minutes, ...
  created_at   TEXT NOT NULL
);
INSERT INTO new_stores (id, owner_id, title, slug, template, store_type, currency, city, settings, created_at)
  SELECT id, owner_id, title, slug, template, store_type, currency, city, settings, created_at FROM stores;
DROP TABLE stores;
ALTER TABLE new_stores RENAME TO stores;
CREATE INDEX stores_owner ON stores(owner_id, id);

-- One storefront token per store (api-v1 §4.3); hashed like every other secret.
CREATE TABLE new_storefront_tokens (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id    INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  token_hash  TEXT NOT NULL UNIQUE,
  scopes      TEXT NOT NULL DEFAULT '["menu:read","order:write"]',
  revoked_at  TEXT,
  created_at  TEXT NOT NULL
);
INSERT INTO new_storefront_tokens (id, store_id, token_hash, scopes, revoked_at, created_at)
  SELECT id, store_id, token_hash, scopes, revoked_at, created_at FROM storefront_tokens;
DROP TABLE storefront_tokens;
ALTER TABLE new_storefront_tokens RENAME TO storefront_tokens;

CREATE TABLE new_menu_categories (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id    INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  position    INTEGER NOT NULL DEFAULT 0,
  station     TEXT,                          -- KDS station for this category's lines
  created_at  TEXT NOT NULL
);
INSERT INTO new_menu_categories (id, store_id, name, position, station, created_at)
  SELECT id, store_id, name, position, station, created_at FROM menu_categories;
DROP TABLE menu_categories;
ALTER TABLE new_menu_categories RENAME TO menu_categories;
CREATE INDEX menu_categories_store ON menu_categories(store_id, position, id);

CREATE TABLE new_menu_items (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id     INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  -- No ON DELETE rule: a category with items cannot be deleted (category_not_empty, src/storage/menu.ts).
  category_id  INTEGER NOT NULL REFERENCES menu_categories(id),
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  price        INTEGER NOT NULL,             -- cents
  position     INTEGER NOT NULL DEFAULT 0,
  is_sold_out  INTEGER NOT NULL DEFAULT 0,
  is_popular   INTEGER NOT NULL DEFAULT 0,
  -- food fields
  is_vegan     INTEGER NOT NULL DEFAULT 0,
  is_halal     INTEGER NOT NULL DEFAULT 0,
  calories     INTEGER,
  -- goods fields
  brand        TEXT,
  stock        INTEGER,
  sku          TEXT,
  images       TEXT NOT NULL DEFAULT '[]',   -- JSON array of image URLs (storefront gallery)
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
INSERT INTO new_menu_items (id, store_id, category_id, name, description, price, position, is_sold_out, is_popular, is_vegan, is_halal, calories, brand, stock, sku, images, created_at, updated_at)
  SELECT id, store_id, category_id, name, description, price, position, is_sold_out, is_popular, is_vegan, is_halal, calories, brand, stock, sku, images, created_at, updated_at FROM menu_items;
DROP TABLE menu_items;
ALTER TABLE new_menu_items RENAME TO menu_items;
CREATE INDEX menu_items_store ON menu_items(store_id, category_id, position, id);
CREATE INDEX menu_items_category ON menu_items(category_id);

-- Variants of an item (sizes for food, size/colour SKUs for goods). An order line's `variation`
-- names one of these; its price, when set, replaces the item price.
CREATE TABLE new_item_variants (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  item_id     INTEGER NOT NULL REFERENCES menu_items(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  price       INTEGER,                       -- cents; NULL = the item's price
  sku         TEXT,
  stock       INTEGER,
  position    INTEGER NOT NULL DEFAULT 0,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
INSERT INTO new_item_variants (id, item_id, name, price, sku, stock, position, created_at, updated_at)
  SELECT id, item_id, name, price, sku, stock, position, created_at, updated_at FROM item_variants;
DROP TABLE item_variants;
ALTER TABLE new_item_variants RENAME TO item_variants;
CREATE INDEX item_variants_item ON item_variants(item_id, position, id);

-- Extras (add-ons) of an item, optionally grouped ("Sauces", "Toppings"). Replaced wholesale when an
-- item is edited, so their ids churn: AUTOINCREMENT keeps an old order line's extra id unambiguous.
CREATE TABLE new_item_extras (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  item_id     INTEGER NOT NULL REFERENCES menu_items(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  price       INTEGER NOT NULL DEFAULT 0,    -- cents
  group_name  TEXT,
  position    INTEGER NOT NULL DEFAULT 0
);
INSERT INTO new_item_extras (id, item_id, name, price, group_name, position)
  SELECT id, item_id, name, price, group_name, position FROM item_extras;
DROP TABLE item_extras;
ALTER TABLE new_item_extras RENAME TO item_extras;
CREATE INDEX item_extras_item ON item_extras(item_id, position, id);

CREATE TABLE new_orders (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id         INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  type             TEXT NOT NULL,
  status           TEXT NOT NULL,
  delivery_status  TEXT,                     -- NULL for orders that are not deliveries
  is_paid          INTEGER NOT NULL DEFAULT 0,
  -- new in 006: the order outlives its customer account (kept for the owner's books).
  customer_id      INTEGER REFERENCES customers(id) ON DELETE SET NULL,
  customer_name    TEXT,
  phone            TEXT,
  table_number     TEXT,
  address          TEXT,
  note             TEXT,
  source           TEXT,
  coupon_code      TEXT,
  subtotal         INTEGER NOT NULL,         -- cents, lines incl. extras
  discount         INTEGER NOT NULL DEFAULT 0,
  tip_amount       INTEGER NOT NULL DEFAULT 0,
  total            INTEGER NOT NULL,
  -- new in 006: a deleted driver's orders keep their history but name no driver (a driver with active
  -- deliveries cannot be deleted: driver_busy, docs/drivers.md).
  driver_id        INTEGER REFERENCES drivers(id) ON DELETE SET NULL,
  track_token      TEXT NOT NULL UNIQUE,     -- public tracking capability (api-v1 §2.5), 256 random bits
  timeline         TEXT NOT NULL,            -- JSON {"<stage>_at": iso, ...}
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
INSERT INTO new_orders (id, store_id, type, status, delivery_status, is_paid, customer_id, customer_name, phone, table_number, address, note, source, coupon_code, subtotal, discount, tip_amount, total, driver_id, track_token, timeline, created_at, updated_at)
  SELECT id, store_id, type, status, delivery_status, is_paid, customer_id, customer_name, phone, table_number, address, note, source, coupon_code, subtotal, discount, tip_amount, total, driver_id, track_token, timeline, created_at, updated_at FROM orders;
DROP TABLE orders;
ALTER TABLE new_orders RENAME TO orders;
CREATE INDEX orders_store_created ON orders(store_id, id DESC);
CREATE INDEX orders_store_status ON orders(store_id, status, id DESC);
CREATE INDEX orders_store_created_at ON orders(store_id, created_at);
CREATE INDEX orders_driver ON orders(driver_id, delivery_status, id DESC);
CREATE INDEX orders_store_delivery ON orders(store_id, delivery_status, id DESC);
CREATE INDEX orders_customer ON orders(customer_id, id DESC);

CREATE TABLE new_order_lines (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  order_id      INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  item_id       INTEGER NOT NULL,            -- no FK: history survives menu deletes
  variant_id    INTEGER,
  name          TEXT NOT NULL,
  variant_name  TEXT,
  quantity      INTEGER NOT NULL,
  unit_price    INTEGER NOT NULL,            -- cents, variant price or item price
  extras        TEXT NOT NULL DEFAULT '[]',  -- JSON [{id, name, price}] (cents)
  line_total    INTEGER NOT NULL,            -- (unit + extras) * quantity, cents
  note          TEXT,
  station       TEXT,                        -- KDS station (from the category)
  kds_state     TEXT NOT NULL DEFAULT 'queued',
  kds_timeline  TEXT NOT NULL DEFAULT '{}'   -- JSON {"queued_at": iso, "preparing_at": ...}
);
INSERT INTO new_order_lines (id, order_id, item_id, variant_id, name, variant_name, quantity, unit_price, extras, line_total, note, station, kds_state, kds_timeline)
  SELECT id, order_id, item_id, variant_id, name, variant_name, quantity, unit_price, extras, line_total, note, station, kds_state, kds_timeline FROM order_lines;
DROP TABLE order_lines;
ALTER TABLE new_order_lines RENAME TO order_lines;
CREATE INDEX order_lines_order ON order_lines(order_id);
CREATE INDEX order_lines_item ON order_lines(item_id);

-- Transactional outbox: written in the same transaction as the change that caused the event. Its id
-- is the webhook event id receivers deduplicate on (api-v1 §6): never reused, even if rows are pruned.
CREATE TABLE new_outbox (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id    INTEGER NOT NULL,
  store_id    INTEGER,
  event       TEXT NOT NULL,
  data        TEXT NOT NULL,                 -- JSON payload (api-v1 §6 `data`)
  created_at  TEXT NOT NULL
);
INSERT INTO new_outbox (id, owner_id, store_id, event, data, created_at) SELECT id, owner_id, store_id, event, data, created_at FROM outbox;
DROP TABLE outbox;
ALTER TABLE new_outbox RENAME TO outbox;
CREATE INDEX outbox_owner ON outbox(owner_id, id);

-- Drivers (api-v1 §2.7); on_shift added by 004.
CREATE TABLE new_drivers (
  id                   INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id             INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  restaurant_id        INTEGER REFERENCES stores(id) ON DELETE SET NULL,
  name                 TEXT NOT NULL,
  phone                TEXT NOT NULL,
  token_hash           TEXT UNIQUE,
  lat                  REAL,
  lng                  REAL,
  location_updated_at  TEXT,
  created_at           TEXT NOT NULL,
  on_shift             INTEGER NOT NULL DEFAULT 0
);
INSERT INTO new_drivers (id, owner_id, restaurant_id, name, phone, token_hash, lat, lng, location_updated_at, created_at, on_shift)
  SELECT id, owner_id, restaurant_id, name, phone, token_hash, lat, lng, location_updated_at, created_at, on_shift FROM drivers;
DROP TABLE drivers;
ALTER TABLE new_drivers RENAME TO drivers;
CREATE INDEX drivers_owner ON drivers(owner_id, id);
CREATE INDEX drivers_phone ON drivers(phone);
CREATE INDEX drivers_restaurant ON drivers(restaurant_id);

-- 002_people.sql ----------------------------------------------------------------------------------

-- totp_pending and totp_last_step added by 005.
CREATE TABLE new_staff (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
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
  totp_pending   TEXT,
  totp_last_step INTEGER,
  UNIQUE (store_id, email)
);
INSERT INTO new_staff (id, store_id, name, email, role, password_hash, pin_hash, permissions, station, totp_secret, created_at, totp_pending, totp_last_step)
  SELECT id, store_id, name, email, role, password_hash, pin_hash, permissions, station, totp_secret, created_at, totp_pending, totp_last_step FROM staff;
DROP TABLE staff;
ALTER TABLE new_staff RENAME TO staff;

CREATE TABLE new_customers (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO new_customers (id, store_id, name, email, phone, password_hash, birthday, consents, created_at, updated_at)
  SELECT id, store_id, name, email, phone, password_hash, birthday, consents, created_at, updated_at FROM customers;
DROP TABLE customers;
ALTER TABLE new_customers RENAME TO customers;
CREATE UNIQUE INDEX customers_store_email ON customers(store_id, email) WHERE email IS NOT NULL;
CREATE INDEX customers_store_phone ON customers(store_id, phone);

-- 003_webhooks.sql --------------------------------------------------------------------------------

CREATE TABLE new_webhook_endpoints (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id       INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  url            TEXT NOT NULL,
  events         TEXT NOT NULL,              -- JSON array: event names, "*", "<family>.*"
  -- The signing secret has to be used raw (HMAC), so unlike tokens it cannot be stored as a hash.
  secret         TEXT NOT NULL,              -- whsec_<base64>
  -- Events up to this outbox id happened before the endpoint existed and are not delivered to it.
  from_event_id  INTEGER NOT NULL,
  paused_at      TEXT,                       -- non-NULL: paused (deliveries queue up, nothing is sent)
  created_at     TEXT NOT NULL
);
INSERT INTO new_webhook_endpoints (id, owner_id, url, events, secret, from_event_id, paused_at, created_at)
  SELECT id, owner_id, url, events, secret, from_event_id, paused_at, created_at FROM webhook_endpoints;
DROP TABLE webhook_endpoints;
ALTER TABLE new_webhook_endpoints RENAME TO webhook_endpoints;
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints(owner_id, id);

-- One row per (event, endpoint); msg_id is fixed here, before the first attempt, and reused by every
-- retry. A re-queue is a new row with a new msg_id pointing at the original (requeued_from).
CREATE TABLE new_webhook_deliveries (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  endpoint_id      INTEGER NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  msg_id           TEXT NOT NULL,            -- 128 random bits: unique without an index to maintain
  event_id         INTEGER,                  -- outbox id; NULL for ping and re-queues
  event            TEXT NOT NULL,
  body             TEXT NOT NULL,            -- the exact JSON sent: {id, event, created_at, data}
  status           TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER,                  -- ms since the epoch while pending, else NULL
  -- Names this table by its final name, so the rename below has nothing to rewrite in any mode.
  requeued_from    INTEGER REFERENCES webhook_deliveries(id) ON DELETE SET NULL,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  UNIQUE (event_id, endpoint_id)
);
INSERT INTO new_webhook_deliveries (id, endpoint_id, msg_id, event_id, event, body, status, attempts, next_attempt_at, requeued_from, created_at, updated_at)
  SELECT id, endpoint_id, msg_id, event_id, event, body, status, attempts, next_attempt_at, requeued_from, created_at, updated_at FROM webhook_deliveries;
DROP TABLE webhook_deliveries;
ALTER TABLE new_webhook_deliveries RENAME TO webhook_deliveries;
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(endpoint_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, id);

-- Every attempt (api-v1 §6 rule 4): HTTP status (NULL on timeout or refusal), the error, an excerpt.
CREATE TABLE new_webhook_attempts (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id       INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt           INTEGER NOT NULL,
  http_status       INTEGER,
  error             TEXT,
  response_excerpt  TEXT NOT NULL DEFAULT '',
  duration_ms       INTEGER NOT NULL,
  created_at        TEXT NOT NULL
);
INSERT INTO new_webhook_attempts (id, delivery_id, attempt, http_status, error, response_excerpt, duration_ms, created_at)
  SELECT id, delivery_id, attempt, http_status, error, response_excerpt, duration_ms, created_at FROM webhook_attempts;
DROP TABLE webhook_attempts;
ALTER TABLE new_webhook_attempts RENAME TO webhook_attempts;
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, attempt);

-- 004_delivery.sql --------------------------------------------------------------------------------

CREATE TABLE new_driver_shifts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  driver_id   INTEGER NOT NULL REFERENCES drivers(id) ON DELETE CASCADE,
  started_at  TEXT NOT NULL,
  ended_at    TEXT
);
INSERT INTO new_driver_shifts (id, driver_id, started_at, ended_at) SELECT id, driver_id, started_at, ended_at FROM driver_shifts;
DROP TABLE driver_shifts;
ALTER TABLE new_driver_shifts RENAME TO driver_shifts;
CREATE INDEX driver_shifts_driver ON driver_shifts(driver_id, id DESC);

-- Device tokens issued by the SMS login (one per device). The owner-issued token stays in
-- drivers.token_hash; rotating it revokes these too, so "the old token stops working at once".
CREATE TABLE new_driver_tokens (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  driver_id   INTEGER NOT NULL REFERENCES drivers(id) ON DELETE CASCADE,
  token_hash  TEXT NOT NULL UNIQUE,
  device      TEXT,
  created_at  TEXT NOT NULL,
  revoked_at  TEXT
);
INSERT INTO new_driver_tokens (id, driver_id, token_hash, device, created_at, revoked_at)
  SELECT id, driver_id, token_hash, device, created_at, revoked_at FROM driver_tokens;
DROP TABLE driver_tokens;
ALTER TABLE new_driver_tokens RENAME TO driver_tokens;
CREATE INDEX driver_tokens_driver ON driver_tokens(driver_id);

-- SMS login codes (phone + code → token): only a hash of the code is kept; short-lived, few attempts.
CREATE TABLE new_driver_login_codes (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  phone       TEXT NOT NULL,
  code_hash   TEXT NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0,
  expires_at  TEXT NOT NULL,
  used_at     TEXT,
  created_at  TEXT NOT NULL
);
INSERT INTO new_driver_login_codes (id, phone, code_hash, attempts, expires_at, used_at, created_at)
  SELECT id, phone, code_hash, attempts, expires_at, used_at, created_at FROM driver_login_codes;
DROP TABLE driver_login_codes;
ALTER TABLE new_driver_login_codes RENAME TO driver_login_codes;
CREATE INDEX driver_login_codes_phone ON driver_login_codes(phone, id DESC);

-- Push devices; a device token belongs to one driver at a time (re-registering moves it).
CREATE TABLE new_driver_devices (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  driver_id     INTEGER NOT NULL REFERENCES drivers(id) ON DELETE CASCADE,
  device_token  TEXT NOT NULL UNIQUE,
  platform      TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
INSERT INTO new_driver_devices (id, driver_id, device_token, platform, created_at, updated_at)
  SELECT id, driver_id, device_token, platform, created_at, updated_at FROM driver_devices;
DROP TABLE driver_devices;
ALTER TABLE new_driver_devices RENAME TO driver_devices;
CREATE INDEX driver_devices_driver ON driver_devices(driver_id);

-- Offers of a delivery to drivers, with an expiry; accepting one assigns the order.
CREATE TABLE new_delivery_offers (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  order_id      INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  store_id      INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,  -- new in 006
  driver_id     INTEGER NOT NULL REFERENCES drivers(id) ON DELETE CASCADE,
  fee           INTEGER NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected', 'expired', 'withdrawn')),
  expires_at    TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  responded_at  TEXT
);
INSERT INTO new_delivery_offers (id, order_id, store_id, driver_id, fee, status, expires_at, created_at, responded_at)
  SELECT id, order_id, store_id, driver_id, fee, status, expires_at, created_at, responded_at FROM delivery_offers;
DROP TABLE delivery_offers;
ALTER TABLE new_delivery_offers RENAME TO delivery_offers;
CREATE INDEX delivery_offers_driver ON delivery_offers(driver_id, status, expires_at);
CREATE INDEX delivery_offers_order ON delivery_offers(order_id, status);

-- 005_staff_customers.sql -------------------------------------------------------------------------

-- One token per staff member and device; logout revokes only the token it was sent with.
CREATE TABLE new_staff_tokens (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  staff_id    INTEGER NOT NULL REFERENCES staff(id) ON DELETE CASCADE,
  token_hash  TEXT NOT NULL UNIQUE,
  device      TEXT NOT NULL,
  method      TEXT NOT NULL CHECK (method IN ('password', 'pin')),
  created_at  TEXT NOT NULL,
  revoked_at  TEXT
);
INSERT INTO new_staff_tokens (id, staff_id, token_hash, device, method, created_at, revoked_at)
  SELECT id, staff_id, token_hash, device, method, created_at, revoked_at FROM staff_tokens;
DROP TABLE staff_tokens;
ALTER TABLE new_staff_tokens RENAME TO staff_tokens;
CREATE INDEX staff_tokens_staff ON staff_tokens(staff_id, device);

CREATE TABLE new_staff_devices (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  staff_id      INTEGER NOT NULL REFERENCES staff(id) ON DELETE CASCADE,
  device_token  TEXT NOT NULL UNIQUE,
  platform      TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
INSERT INTO new_staff_devices (id, staff_id, device_token, platform, created_at, updated_at)
  SELECT id, staff_id, device_token, platform, created_at, updated_at FROM staff_devices;
DROP TABLE staff_devices;
ALTER TABLE new_staff_devices RENAME TO staff_devices;
CREATE INDEX staff_devices_staff ON staff_devices(staff_id);

-- Coupons (docs/storefront.md "Coupons"): code unique per store, case-insensitive (stored upper).
CREATE TABLE new_coupons (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO new_coupons (id, store_id, code, kind, value, min_order, starts_at, ends_at, usage_limit, uses, active, created_at, updated_at)
  SELECT id, store_id, code, kind, value, min_order, starts_at, ends_at, usage_limit, uses, active, created_at, updated_at FROM coupons;
DROP TABLE coupons;
ALTER TABLE new_coupons RENAME TO coupons;

CREATE TABLE new_coupon_redemptions (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  coupon_id   INTEGER NOT NULL REFERENCES coupons(id) ON DELETE CASCADE,
  order_id    INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  discount    INTEGER NOT NULL,
  created_at  TEXT NOT NULL
);
INSERT INTO new_coupon_redemptions (id, coupon_id, order_id, discount, created_at)
  SELECT id, coupon_id, order_id, discount, created_at FROM coupon_redemptions;
DROP TABLE coupon_redemptions;
ALTER TABLE new_coupon_redemptions RENAME TO coupon_redemptions;
CREATE INDEX coupon_redemptions_coupon ON coupon_redemptions(coupon_id);

-- Customer app: one token per device, individually revocable (api-v1 §5).
CREATE TABLE new_customer_tokens (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  customer_id  INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
  token_hash   TEXT NOT NULL UNIQUE,
  device       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  revoked_at   TEXT
);
INSERT INTO new_customer_tokens (id, customer_id, token_hash, device, created_at, revoked_at)
  SELECT id, customer_id, token_hash, device, created_at, revoked_at FROM customer_tokens;
DROP TABLE customer_tokens;
ALTER TABLE new_customer_tokens RENAME TO customer_tokens;
CREATE INDEX customer_tokens_customer ON customer_tokens(customer_id, device);

-- SMS one-time codes: only a salted hash of the code; short-lived, single use, few attempts.
CREATE TABLE new_customer_otps (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id    INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  phone       TEXT NOT NULL,
  code_hash   TEXT NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0,
  expires_at  TEXT NOT NULL,
  used_at     TEXT,
  created_at  TEXT NOT NULL
);
INSERT INTO new_customer_otps (id, store_id, phone, code_hash, attempts, expires_at, used_at, created_at)
  SELECT id, store_id, phone, code_hash, attempts, expires_at, used_at, created_at FROM customer_otps;
DROP TABLE customer_otps;
ALTER TABLE new_customer_otps RENAME TO customer_otps;
CREATE INDEX customer_otps_phone ON customer_otps(store_id, phone, id DESC);

CREATE TABLE new_customer_addresses (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO new_customer_addresses (id, customer_id, label, address, lat, lng, notes, is_default, created_at, updated_at)
  SELECT id, customer_id, label, address, lat, lng, notes, is_default, created_at, updated_at FROM customer_addresses;
DROP TABLE customer_addresses;
ALTER TABLE new_customer_addresses RENAME TO customer_addresses;
CREATE INDEX customer_addresses_customer ON customer_addresses(customer_id, id);

-- Balances are ledgers: the balance is the sum of the entries, never a mutable number.
CREATE TABLE new_gift_cards (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id     INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  customer_id  INTEGER REFERENCES customers(id) ON DELETE SET NULL,
  code_hash    TEXT NOT NULL UNIQUE,
  code_last4   TEXT NOT NULL,
  expires_at   TEXT,
  created_at   TEXT NOT NULL
);
INSERT INTO new_gift_cards (id, store_id, customer_id, code_hash, code_last4, expires_at, created_at)
  SELECT id, store_id, customer_id, code_hash, code_last4, expires_at, created_at FROM gift_cards;
DROP TABLE gift_cards;
ALTER TABLE new_gift_cards RENAME TO gift_cards;
CREATE INDEX gift_cards_customer ON gift_cards(customer_id);

-- order_id: new in 006. SET NULL, not CASCADE: a ledger entry is money and outlives the order.
CREATE TABLE new_gift_card_entries (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  gift_card_id  INTEGER NOT NULL REFERENCES gift_cards(id) ON DELETE CASCADE,
  amount        INTEGER NOT NULL,             -- cents; + issue/top-up, - redemption
  reason        TEXT NOT NULL,
  order_id      INTEGER REFERENCES orders(id) ON DELETE SET NULL,
  created_at    TEXT NOT NULL
);
INSERT INTO new_gift_card_entries (id, gift_card_id, amount, reason, order_id, created_at)
  SELECT id, gift_card_id, amount, reason, order_id, created_at FROM gift_card_entries;
DROP TABLE gift_card_entries;
ALTER TABLE new_gift_card_entries RENAME TO gift_card_entries;
CREATE INDEX gift_card_entries_card ON gift_card_entries(gift_card_id);
-- The foreign key's child index: deleting an order (with its store) looks its entries up here.
CREATE INDEX gift_card_entries_order ON gift_card_entries(order_id) WHERE order_id IS NOT NULL;

-- order_id: new in 006, as for gift card entries.
CREATE TABLE new_store_credit_entries (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id     INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  customer_id  INTEGER NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
  amount       INTEGER NOT NULL,              -- cents; + credit, - spend
  reason       TEXT NOT NULL,
  order_id     INTEGER REFERENCES orders(id) ON DELETE SET NULL,
  created_at   TEXT NOT NULL
);
INSERT INTO new_store_credit_entries (id, store_id, customer_id, amount, reason, order_id, created_at)
  SELECT id, store_id, customer_id, amount, reason, order_id, created_at FROM store_credit_entries;
DROP TABLE store_credit_entries;
ALTER TABLE new_store_credit_entries RENAME TO store_credit_entries;
CREATE INDEX store_credit_customer ON store_credit_entries(customer_id, id DESC);
CREATE INDEX store_credit_entries_order ON store_credit_entries(order_id) WHERE order_id IS NOT NULL;

-- 4. Sequences. Copying rows with their ids set each table's sequence to its highest id; raise it to
--    the floors of step 1 so an id that only survives in a reference or an event is not handed out.
INSERT INTO sqlite_sequence (name, seq)
  SELECT DISTINCT f.name, 0 FROM temp.id_floor_seen f WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence s WHERE s.name = f.name);
UPDATE sqlite_sequence
  SET seq = MAX(seq, (SELECT COALESCE(MAX(f.seq), 0) FROM temp.id_floor_seen f WHERE f.name = sqlite_sequence.name))
  WHERE name IN (SELECT name FROM temp.id_floor_seen);
DROP TABLE temp.id_floor_seen;
