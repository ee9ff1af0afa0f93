-- Core schema: accounts, owner tokens, stores, menu, orders, idempotency, event outbox.
-- Money is stored as integer minor units (cents); timestamps as ISO 8601 UTC strings.

CREATE TABLE owners (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  email       TEXT NOT NULL,
  created_at  TEXT NOT NULL
);

-- Owner/reseller API tokens (api-v1 §5): only the SHA-256 of the token is kept.
CREATE TABLE owner_tokens (
  id            INTEGER PRIMARY KEY,
  owner_id      INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  token_hash    TEXT NOT NULL UNIQUE,
  token_prefix  TEXT NOT NULL,             -- first characters, to recognise a token in lists
  name          TEXT NOT NULL DEFAULT '',
  capabilities  TEXT NOT NULL,             -- JSON array, e.g. ["*"] or ["orders:read","menu:write"]
  expires_at    TEXT,
  revoked_at    TEXT,
  created_at    TEXT NOT NULL
);
CREATE INDEX owner_tokens_owner ON owner_tokens(owner_id);

CREATE TABLE stores (
  id           INTEGER PRIMARY KEY,
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
CREATE INDEX stores_owner ON stores(owner_id, id);

-- One storefront token per store (api-v1 §4.3); hashed like every other secret.
CREATE TABLE storefront_tokens (
  id          INTEGER PRIMARY KEY,
  store_id    INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  token_hash  TEXT NOT NULL UNIQUE,
  scopes      TEXT NOT NULL DEFAULT '["menu:read","order:write"]',
  revoked_at  TEXT,
  created_at  TEXT NOT NULL
);

CREATE TABLE menu_categories (
  id          INTEGER PRIMARY KEY,
  store_id    INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  position    INTEGER NOT NULL DEFAULT 0,
  station     TEXT,                          -- KDS station for this category's lines
  created_at  TEXT NOT NULL
);
CREATE INDEX menu_categories_store ON menu_categories(store_id, position, id);

CREATE TABLE menu_items (
  id           INTEGER PRIMARY KEY,
  store_id     INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
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
CREATE INDEX menu_items_store ON menu_items(store_id, category_id, position, id);
CREATE INDEX menu_items_category ON menu_items(category_id);

-- Variants of an item (sizes for food, size/colour SKUs for goods). An order line's `variation`
-- names one of these; its price, when set, replaces the item price.
CREATE TABLE item_variants (
  id          INTEGER PRIMARY KEY,
  item_id     INTEGER NOT NULL REFERENCES menu_items(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  price       INTEGER,                       -- cents; NULL = the item's price
  sku         TEXT,
  stock       INTEGER,
  position    INTEGER NOT NULL DEFAULT 0,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX item_variants_item ON item_variants(item_id, position, id);

-- Extras (add-ons) of an item, optionally grouped ("Sauces", "Toppings").
CREATE TABLE item_extras (
  id          INTEGER PRIMARY KEY,
  item_id     INTEGER NOT NULL REFERENCES menu_items(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  price       INTEGER NOT NULL DEFAULT 0,    -- cents
  group_name  TEXT,
  position    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX item_extras_item ON item_extras(item_id, position, id);

CREATE TABLE orders (
  id               INTEGER PRIMARY KEY,
  store_id         INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  type             TEXT NOT NULL,
  status           TEXT NOT NULL,
  delivery_status  TEXT,                     -- NULL for orders that are not deliveries
  is_paid          INTEGER NOT NULL DEFAULT 0,
  customer_id      INTEGER,
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
  driver_id        INTEGER,
  track_token      TEXT NOT NULL UNIQUE,     -- public tracking capability (api-v1 §2.5), 256 random bits
  timeline         TEXT NOT NULL,            -- JSON {"<stage>_at": iso, ...}
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX orders_store_created ON orders(store_id, id DESC);
CREATE INDEX orders_store_status ON orders(store_id, status, id DESC);
CREATE INDEX orders_store_created_at ON orders(store_id, created_at);

CREATE TABLE order_lines (
  id            INTEGER PRIMARY KEY,
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
CREATE INDEX order_lines_order ON order_lines(order_id);
CREATE INDEX order_lines_item ON order_lines(item_id);

-- Idempotency (IETF draft): the key, a hash of the request, and the resource it created.
CREATE TABLE idempotency_keys (
  scope         TEXT NOT NULL,               -- principal, e.g. "owner:1"
  key           TEXT NOT NULL,
  request_hash  TEXT NOT NULL,
  order_id      INTEGER NOT NULL,
  created_at    TEXT NOT NULL,
  PRIMARY KEY (scope, key)
);

-- Transactional outbox: written in the same transaction as the change that caused the event.
CREATE TABLE outbox (
  id          INTEGER PRIMARY KEY,
  owner_id    INTEGER NOT NULL,
  store_id    INTEGER,
  event       TEXT NOT NULL,
  data        TEXT NOT NULL,                 -- JSON payload (api-v1 §6 `data`)
  created_at  TEXT NOT NULL
);
CREATE INDEX outbox_owner ON outbox(owner_id, id);

-- Drivers (api-v1 §2.7); the driver app and live location come with the delivery work.
CREATE TABLE drivers (
  id                   INTEGER PRIMARY KEY,
  owner_id             INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  restaurant_id        INTEGER REFERENCES stores(id) ON DELETE SET NULL,
  name                 TEXT NOT NULL,
  phone                TEXT NOT NULL,
  token_hash           TEXT UNIQUE,
  lat                  REAL,
  lng                  REAL,
  location_updated_at  TEXT,
  created_at           TEXT NOT NULL
);
CREATE INDEX drivers_owner ON drivers(owner_id, id);
