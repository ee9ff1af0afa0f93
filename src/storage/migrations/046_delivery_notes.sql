-- Notes for the driver (issue 34 item 4; docs/customers.md "Saved addresses"): a saved address's
-- notes (gate code, floor, where to leave it) travel with a delivery order placed to it, apart from
-- the order's `note`, which the kitchen reads.
ALTER TABLE orders ADD COLUMN delivery_notes TEXT;
