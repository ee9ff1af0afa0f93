-- Deleting a webhook delivery (the retention prune, an endpoint's removal) sets `requeued_from` to NULL
-- in the re-queues that point at it (ON DELETE SET NULL). Without an index on the column SQLite finds
-- them by scanning the whole table once per deleted row: a prune of n deliveries from a table of N cost
-- n × N row reads (10 s for 10,000 of 20,000; minutes at a month of a city's traffic, all of it inside
-- one write that holds the server). Re-queues are rare, so the index holds only them.
CREATE INDEX webhook_deliveries_requeued ON webhook_deliveries(requeued_from) WHERE requeued_from IS NOT NULL;
