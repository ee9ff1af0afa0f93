-- Store operations, money side (issue 17 items 1-3; docs/operations.md "Payments", "Refunds",
-- "Cash shifts"). Money is integer cents, as everywhere. A payment or refund taken in cash while
-- its register has an open shift names that shift, so the shift's expected cash is a sum over rows
-- that are written in the same transaction as the payment itself.

-- A cash drawer's shift: opened with a counted float, closed with the counted cash. At most one open
-- shift per store and register (the partial unique index is the guard even against two front doors
-- at once; the store's actor serialises the friendly 409 before it).
CREATE TABLE shifts (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id            INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  register            TEXT NOT NULL DEFAULT 'main',
  opened_by_staff_id  INTEGER REFERENCES staff(id) ON DELETE SET NULL,  -- NULL: the owner opened it
  closed_by_staff_id  INTEGER REFERENCES staff(id) ON DELETE SET NULL,
  opening_float       INTEGER NOT NULL CHECK (opening_float >= 0),
  expected_cash       INTEGER,            -- at close: float + cash taken (incl. cash tips) - cash refunded
  counted_cash        INTEGER CHECK (counted_cash IS NULL OR counted_cash >= 0),
  note                TEXT,
  opened_at           TEXT NOT NULL,
  closed_at           TEXT
);
CREATE UNIQUE INDEX shifts_one_open ON shifts(store_id, register) WHERE closed_at IS NULL;
CREATE INDEX shifts_store ON shifts(store_id, id DESC);

-- A payment against an order. `amount` counts toward the order's total; `tip_amount` is on top and
-- never counts toward it. Online payments start `pending` and become `succeeded` or `failed` when the
-- payment provider says so; cash and card taken by staff or the owner are `succeeded` at once.
CREATE TABLE payments (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  order_id      INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  store_id      INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  method        TEXT NOT NULL CHECK (method IN ('cash', 'card', 'online')),
  amount        INTEGER NOT NULL CHECK (amount > 0),
  tip_amount    INTEGER NOT NULL DEFAULT 0 CHECK (tip_amount >= 0),
  status        TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  lines         TEXT,                     -- JSON [{line_id, quantity}] when a split bill paid by lines
  provider      TEXT,                     -- online: the payment provider's name
  provider_ref  TEXT,                     -- online: the provider's id of the payment
  shift_id      INTEGER REFERENCES shifts(id) ON DELETE SET NULL,
  staff_id      INTEGER REFERENCES staff(id) ON DELETE SET NULL,
  created_at    TEXT NOT NULL,
  completed_at  TEXT                      -- when it succeeded or failed
);
CREATE INDEX payments_order ON payments(order_id, id);
CREATE INDEX payments_shift ON payments(shift_id) WHERE shift_id IS NOT NULL;
CREATE INDEX payments_store_created ON payments(store_id, created_at);
CREATE UNIQUE INDEX payments_provider_ref ON payments(provider, provider_ref) WHERE provider_ref IS NOT NULL;

-- A refund of (part of) what an order's payments took; never more than was paid and not yet refunded.
CREATE TABLE refunds (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  order_id      INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  store_id      INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  payment_id    INTEGER REFERENCES payments(id) ON DELETE SET NULL,  -- the payment it goes back through
  method        TEXT NOT NULL CHECK (method IN ('cash', 'card', 'online')),
  amount        INTEGER NOT NULL CHECK (amount > 0),
  lines         TEXT,                     -- JSON [{line_id, quantity}] when refunded by lines
  reason        TEXT,
  status        TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
  provider_ref  TEXT,
  shift_id      INTEGER REFERENCES shifts(id) ON DELETE SET NULL,
  staff_id      INTEGER REFERENCES staff(id) ON DELETE SET NULL,
  created_at    TEXT NOT NULL,
  completed_at  TEXT
);
CREATE INDEX refunds_order ON refunds(order_id, id);
CREATE INDEX refunds_shift ON refunds(shift_id) WHERE shift_id IS NOT NULL;
CREATE INDEX refunds_store_created ON refunds(store_id, created_at);
