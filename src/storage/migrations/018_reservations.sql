-- Reservations (issue 17 item 4; api-v1 §2.7, §4.2; docs/operations.md "Reservations").
-- A store's bookable places (tables, or rooms for hotels) with a capacity, and the bookings on them.
-- Capacity is never double booked: the store actor serialises every booking write of a store
-- (src/actors/store-reservations.ts), so the check and the insert happen in one actor turn.
-- Times are stored as UTC ISO 8601 with `+00:00` (src/storage/db.ts nowIso), all the same width, so
-- text comparison is time comparison.

CREATE TABLE dining_tables (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id    INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  capacity    INTEGER NOT NULL CHECK (capacity BETWEEN 1 AND 1000),
  kind        TEXT NOT NULL DEFAULT 'table' CHECK (kind IN ('table', 'room')),
  active      INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),  -- 0: kept for history, not bookable
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE UNIQUE INDEX dining_tables_store_name ON dining_tables(store_id, name COLLATE NOCASE);

-- A booking. `phone` is normalised like customer phones (NULL if none); `customer_id` is set when the
-- customer booked through the customer app. `order_id` is the on-table order opened when seated.
-- `source` says which front door booked it (owner, staff, customer), as the events carry it.
CREATE TABLE reservations (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id       INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  table_id       INTEGER REFERENCES dining_tables(id) ON DELETE SET NULL,
  customer_id    INTEGER REFERENCES customers(id) ON DELETE SET NULL,
  name           TEXT NOT NULL,
  phone          TEXT,
  email          TEXT,
  party_size     INTEGER NOT NULL CHECK (party_size >= 1),
  starts_at      TEXT NOT NULL,
  ends_at        TEXT NOT NULL,
  status         TEXT NOT NULL DEFAULT 'booked' CHECK (status IN ('booked', 'seated', 'completed', 'cancelled', 'no_show')),
  note           TEXT,
  source         TEXT NOT NULL DEFAULT 'owner' CHECK (source IN ('owner', 'staff', 'customer')),
  order_id       INTEGER REFERENCES orders(id) ON DELETE SET NULL,
  cancel_reason  TEXT,
  cancelled_at   TEXT,
  seated_at      TEXT,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  CHECK (ends_at > starts_at)
);
CREATE INDEX reservations_store_starts ON reservations(store_id, starts_at, id);
-- The overlap check of a table: only bookings that still hold the table.
CREATE INDEX reservations_table_active ON reservations(table_id, starts_at) WHERE status IN ('booked', 'seated');
CREATE INDEX reservations_customer ON reservations(customer_id, starts_at) WHERE customer_id IS NOT NULL;
CREATE INDEX reservations_store_phone ON reservations(store_id, phone) WHERE phone IS NOT NULL;
