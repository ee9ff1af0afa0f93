-- Foreign keys whose child rows SQLite must find when their parent goes, and could only find by a
-- whole-table scan per deleted parent.
--
-- Deleting a webhook delivery (the retention prune, an endpoint's removal) sets `requeued_from` to NULL
-- in the re-queues that point at it (ON DELETE SET NULL). Without an index on the column SQLite finds
-- them by scanning the whole table once per deleted row: a prune of n deliveries from a table of N cost
-- n × N row reads (10 s for 10,000 of 20,000; minutes at a month of a city's traffic, all of it inside
-- one write that holds the server). Re-queues are rare, so the index holds only them.
CREATE INDEX webhook_deliveries_requeued ON webhook_deliveries(requeued_from) WHERE requeued_from IS NOT NULL;

-- The same for the other children of rows that go by the thousand: a store's removal deletes its
-- orders (and their payments) in one cascade, and each deleted order or payment looked for its
-- coupon redemptions, reservations and refunds by scanning those tables whole (every store's).
-- test/unit/schema-foreign-keys.test.ts keeps every such reference indexed.
CREATE INDEX coupon_redemptions_order ON coupon_redemptions(order_id);
CREATE INDEX reservations_order ON reservations(order_id) WHERE order_id IS NOT NULL;
CREATE INDEX refunds_payment ON refunds(payment_id) WHERE payment_id IS NOT NULL;
