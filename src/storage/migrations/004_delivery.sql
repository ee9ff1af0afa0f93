-- Drivers, deliveries and live tracking (api-v1 §2.7, §3 delivery rows, §4.2, §4.6; docs/drivers.md).
-- Money in cents, timestamps ISO 8601 UTC, secrets hashed (ARCHITECTURE "Storage").

-- Shift state: drivers off shift get no offers and cannot self-dispatch. History in driver_shifts.
ALTER TABLE drivers ADD COLUMN on_shift INTEGER NOT NULL DEFAULT 0;
CREATE INDEX drivers_phone ON drivers(phone);
CREATE INDEX drivers_restaurant ON drivers(restaurant_id);

CREATE TABLE driver_shifts (
  id          INTEGER PRIMARY KEY,
  driver_id   INTEGER NOT NULL REFERENCES drivers(id) ON DELETE CASCADE,
  started_at  TEXT NOT NULL,
  ended_at    TEXT
);
CREATE INDEX driver_shifts_driver ON driver_shifts(driver_id, id DESC);

-- Device tokens issued by the SMS login (one per device). The owner-issued token stays in
-- drivers.token_hash; rotating it revokes these too, so "the old token stops working at once".
CREATE TABLE driver_tokens (
  id          INTEGER PRIMARY KEY,
  driver_id   INTEGER NOT NULL REFERENCES drivers(id) ON DELETE CASCADE,
  token_hash  TEXT NOT NULL UNIQUE,
  device      TEXT,
  created_at  TEXT NOT NULL,
  revoked_at  TEXT
);
CREATE INDEX driver_tokens_driver ON driver_tokens(driver_id);

-- SMS login codes (phone + code → token): only a hash of the code is kept; short-lived, few attempts.
CREATE TABLE driver_login_codes (
  id          INTEGER PRIMARY KEY,
  phone       TEXT NOT NULL,
  code_hash   TEXT NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0,
  expires_at  TEXT NOT NULL,
  used_at     TEXT,
  created_at  TEXT NOT NULL
);
CREATE INDEX driver_login_codes_phone ON driver_login_codes(phone, id DESC);

-- Push devices; a device token belongs to one driver at a time (re-registering moves it).
CREATE TABLE driver_devices (
  id            INTEGER PRIMARY KEY,
  driver_id     INTEGER NOT NULL REFERENCES drivers(id) ON DELETE CASCADE,
  device_token  TEXT NOT NULL UNIQUE,
  platform      TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX driver_devices_driver ON driver_devices(driver_id);

-- The delivery side of a delivery order, written by the order actor with the order row.
CREATE TABLE deliveries (
  order_id         INTEGER PRIMARY KEY REFERENCES orders(id) ON DELETE CASCADE,
  driver_fee       INTEGER NOT NULL DEFAULT 0,   -- cents paid to the driver, fixed at assignment
  pod_attempts     INTEGER NOT NULL DEFAULT 0,   -- wrong delivery-code attempts
  pod_verified_at  TEXT,
  photo_path       TEXT,                         -- relative to the data directory
  photo_type       TEXT,
  photo_bytes      INTEGER,
  photo_at         TEXT,
  note             TEXT,                         -- the driver's last status note
  updated_at       TEXT NOT NULL
);

-- Offers of a delivery to drivers, with an expiry; accepting one assigns the order.
CREATE TABLE delivery_offers (
  id            INTEGER PRIMARY KEY,
  order_id      INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  store_id      INTEGER NOT NULL,
  driver_id     INTEGER NOT NULL REFERENCES drivers(id) ON DELETE CASCADE,
  fee           INTEGER NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected', 'expired', 'withdrawn')),
  expires_at    TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  responded_at  TEXT
);
CREATE INDEX delivery_offers_driver ON delivery_offers(driver_id, status, expires_at);
CREATE INDEX delivery_offers_order ON delivery_offers(order_id, status);

CREATE INDEX orders_driver ON orders(driver_id, delivery_status, id DESC);
CREATE INDEX orders_store_delivery ON orders(store_id, delivery_status, id DESC);
