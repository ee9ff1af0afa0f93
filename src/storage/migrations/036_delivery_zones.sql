-- Delivery zones, fees and quotes (issue 37 items 1-2; docs/dispatch.md). The zones themselves live
-- in the store's settings (`delivery_zones`, written through the store actor); an order keeps what
-- they decided when it was placed: the fee (part of `total`), the zone's name, where it goes, and
-- the estimate it was promised.
ALTER TABLE orders ADD COLUMN delivery_fee INTEGER NOT NULL DEFAULT 0; -- cents, part of total
ALTER TABLE orders ADD COLUMN delivery_zone TEXT;                      -- the zone that priced it
ALTER TABLE orders ADD COLUMN dest_lat REAL;                           -- where a delivery goes
ALTER TABLE orders ADD COLUMN dest_lng REAL;
ALTER TABLE orders ADD COLUMN eta TEXT;                                -- JSON {ready_at, pickup_at, dropoff_at}, delivery orders
