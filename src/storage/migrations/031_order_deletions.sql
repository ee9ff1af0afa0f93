-- The owner's order list shows the store's number of orders (api-v1 §2.1 `total`). Counting them on
-- every request walked the store's whole index: 34–85 ms of the event loop for a store with a
-- million orders. src/storage/orders.ts keeps each store's total in memory and brings it up to date
-- by counting only the orders newer than its last count (ids only grow: AUTOINCREMENT, migration
-- 006). Orders are never deleted one by one today, only with their store; whatever deletes one, from
-- any connection (the CLI included), counts here, and a changed count makes every kept total start
-- again from a full count. The cost is one row update per deleted order, nothing per new order.
CREATE TABLE order_deletions (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  n  INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO order_deletions (id, n) VALUES (1, 0);
CREATE TRIGGER orders_deleted AFTER DELETE ON orders BEGIN UPDATE order_deletions SET n = n + 1 WHERE id = 1; END;
