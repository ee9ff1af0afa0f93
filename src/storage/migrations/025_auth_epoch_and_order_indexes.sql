-- Issue 19 item 1: the owner-token, suspension and store lookups every request makes are cached in
-- the server (src/storage/auth-epoch.ts), safely only if any change to what they read is seen at
-- once, whichever connection makes it (the CLI revokes tokens and suspends accounts on its own
-- connection). These triggers count every such change in one row; a cached answer is used only while
-- the count is still the one it was read under, so one primary-key read per check replaces the lookups.
-- Inserts are not counted: the caches hold found rows only, and a new row cannot make one stale.
-- One row, never a generated id (so no AUTOINCREMENT): WITHOUT ROWID says so.
CREATE TABLE auth_epoch (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  n   INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO auth_epoch (id, n) VALUES (1, 0);

CREATE TRIGGER owner_tokens_epoch_update AFTER UPDATE ON owner_tokens BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER owner_tokens_epoch_delete AFTER DELETE ON owner_tokens BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER owners_epoch_update AFTER UPDATE ON owners BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER owners_epoch_delete AFTER DELETE ON owners BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER stores_epoch_update AFTER UPDATE ON stores BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER stores_epoch_delete AFTER DELETE ON stores BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;

-- Fewer index writes per order (issue 19 item 1; docs/architecture.md "Where an order's time goes").
-- Most orders have no customer, no driver and (unless they are deliveries) no delivery status, yet
-- each got an entry in these three indexes. As partial indexes they hold only the orders that have
-- the value; every query that uses them compares the column (= or IN), which SQLite knows implies
-- IS NOT NULL, so their plans are unchanged (checked with EXPLAIN QUERY PLAN for every such query,
-- and for the ON DELETE SET NULL of customers and drivers).
DROP INDEX orders_customer;
CREATE INDEX orders_customer ON orders(customer_id, id DESC) WHERE customer_id IS NOT NULL;
DROP INDEX orders_driver;
CREATE INDEX orders_driver ON orders(driver_id, delivery_status, id DESC) WHERE driver_id IS NOT NULL;
DROP INDEX orders_store_delivery;
CREATE INDEX orders_store_delivery ON orders(store_id, delivery_status, id DESC) WHERE delivery_status IS NOT NULL;
-- No query looks order lines up by item (menu items have no foreign key from lines: history outlives them).
DROP INDEX order_lines_item;
