-- Online payments that can no longer count in full (issue 17 item 1, review finding; docs/operations.md
-- "Online payments and the payment provider"): when the provider confirms a payment after the order was
-- covered or cancelled, or after the payment itself was cancelled, the money taken is recorded
-- (`status = 'succeeded'`, `amount` as charged) and `excess` cents of it are given straight back by a
-- refund through that payment. Only `amount - excess` counts toward the order total.
ALTER TABLE payments ADD COLUMN excess INTEGER NOT NULL DEFAULT 0 CHECK (excess >= 0);
