-- The kitchen status follows the delivery status (issue 34 item 2, docs/orders.md "How the two
-- statuses move together"; src/domain/order-state.ts `kitchenAfterDelivery`, applied by the order
-- actor from now on). Orders written before kept `new` (or `preparing`) while their driver picked
-- them up or delivered them: the board showed delivered orders under New with a Start button and
-- analytics counted them as new. They are brought to what the rule would have made them, with the
-- stage stamped when the delivery reached it (else when the order last changed). No webhook event
-- is emitted for this catch-up: receivers already had the delivery events of those moves.
UPDATE orders
   SET status = 'delivered',
       timeline = json_set(timeline, '$.delivered_at', COALESCE(json_extract(timeline, '$.delivered_at'), updated_at))
 WHERE delivery_status = 'delivered' AND status IN ('new', 'preparing', 'ready');
UPDATE orders
   SET status = 'ready',
       timeline = json_set(timeline, '$.ready_at', COALESCE(json_extract(timeline, '$.ready_at'), json_extract(timeline, '$.picked_up_at'), updated_at))
 WHERE delivery_status IN ('picked_up', 'out_for_delivery') AND status IN ('new', 'preparing');
-- Their lines left every kitchen screen with the food (docs/kds.md "Leaving the kitchen"); lines of
-- orders older than that rule are resolved the same way here.
UPDATE order_lines
   SET kds_state = 'served',
       kds_timeline = json_set(kds_timeline, '$.served_at', (SELECT updated_at FROM orders o WHERE o.id = order_lines.order_id))
 WHERE kds_state IN ('queued', 'preparing', 'ready')
   AND order_id IN (SELECT id FROM orders WHERE delivery_status IN ('picked_up', 'out_for_delivery', 'delivered'));
