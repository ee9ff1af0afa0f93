-- Online refunds left `pending` (the server stopped between reserving one and settling it, or the
-- provider answered pending) are asked for again by a scheduled retry (src/maintenance/refund-retry.ts).
-- It looks for them every few minutes; the index holds only the pending ones, so the look costs
-- nothing however many refunds the table keeps.
CREATE INDEX refunds_pending ON refunds(id) WHERE status = 'pending';
