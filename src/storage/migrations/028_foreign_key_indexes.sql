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

-- And every reference held by a table that grows with traffic, whatever its parent: removing one staff
-- member, store, plan or subscription otherwise reads all of the store's (every store's) payments,
-- refunds, delivery offers, credit entries, app usage or invoices once. Partial where the column is
-- optional, so rows without a reference cost nothing.
CREATE INDEX payments_staff ON payments(staff_id) WHERE staff_id IS NOT NULL;
CREATE INDEX refunds_staff ON refunds(staff_id) WHERE staff_id IS NOT NULL;
CREATE INDEX shifts_opened_by ON shifts(opened_by_staff_id) WHERE opened_by_staff_id IS NOT NULL;
CREATE INDEX shifts_closed_by ON shifts(closed_by_staff_id) WHERE closed_by_staff_id IS NOT NULL;
CREATE INDEX staff_pin_devices_enrolled_by ON staff_pin_devices(enrolled_by_staff_id) WHERE enrolled_by_staff_id IS NOT NULL;
CREATE INDEX delivery_offers_store ON delivery_offers(store_id);
CREATE INDEX store_credit_entries_store ON store_credit_entries(store_id);
CREATE INDEX app_usage_wallet_entry ON app_usage(wallet_entry_id) WHERE wallet_entry_id IS NOT NULL;
CREATE INDEX app_charges_wallet_entry ON app_charges(wallet_entry_id) WHERE wallet_entry_id IS NOT NULL;
CREATE INDEX customer_invoices_plan ON customer_invoices(plan_id) WHERE plan_id IS NOT NULL;
CREATE INDEX customer_invoices_subscription ON customer_invoices(subscription_id) WHERE subscription_id IS NOT NULL;
CREATE INDEX customer_invoices_customer ON customer_invoices(customer_id) WHERE customer_id IS NOT NULL;
