-- What an order's completed refunds gave back, kept on the order row (issue 17 item 2: "the order's
-- totals reflect them") so every order view shows it without a query per order. Written by the
-- refund's own transaction (src/storage/refunds.ts); existing refunds are counted in.
ALTER TABLE orders ADD COLUMN refunded INTEGER NOT NULL DEFAULT 0;
UPDATE orders SET refunded = (SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE refunds.order_id = orders.id AND refunds.status = 'completed')
  WHERE id IN (SELECT order_id FROM refunds WHERE status = 'completed');
