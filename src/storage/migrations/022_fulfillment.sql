-- Every fulfillment mode and shipments (issue 18 items 5-6; docs/verticals.md "Fulfillment modes",
-- "Shipments"). An order keeps what its mode needs in its own columns; slots and appointments are
-- counted per store by start time (partial indexes: only the orders that have one).
ALTER TABLE orders ADD COLUMN room_number TEXT;                        -- room_service
ALTER TABLE orders ADD COLUMN shipping_address TEXT;                   -- ship: JSON {name, line1, line2?, city, postal_code, country, phone?}
ALTER TABLE orders ADD COLUMN shipping_fee INTEGER NOT NULL DEFAULT 0; -- ship: cents, part of total
ALTER TABLE orders ADD COLUMN slot_start TEXT;                         -- pickup_slot: ISO 8601 UTC
ALTER TABLE orders ADD COLUMN slot_end TEXT;
ALTER TABLE orders ADD COLUMN slot_kind TEXT;                          -- pickup_slot: 'pickup' | 'dropoff'
ALTER TABLE orders ADD COLUMN appointment_start TEXT;                  -- appointment: ISO 8601 UTC
ALTER TABLE orders ADD COLUMN appointment_end TEXT;
CREATE INDEX orders_store_slot ON orders(store_id, slot_start) WHERE slot_start IS NOT NULL;
CREATE INDEX orders_store_appointment ON orders(store_id, appointment_start) WHERE appointment_start IS NOT NULL;

-- One shipment per `ship` order, created in the order's own transaction. `timeline` is JSON
-- [{status, at, note?}] in order; transitions: src/domain/shipments.ts.
CREATE TABLE shipments (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id         INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  order_id         INTEGER NOT NULL UNIQUE REFERENCES orders(id) ON DELETE CASCADE,
  status           TEXT NOT NULL CHECK (status IN ('pending', 'label_created', 'in_transit', 'out_for_delivery', 'delivered', 'returned', 'failed')),
  carrier          TEXT,
  tracking_number  TEXT,
  tracking_url     TEXT,
  address          TEXT NOT NULL,          -- JSON, the order's shipping address at creation
  timeline         TEXT NOT NULL,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX shipments_store ON shipments(store_id, id DESC);
CREATE INDEX shipments_store_status ON shipments(store_id, status, id DESC);
