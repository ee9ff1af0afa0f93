-- Waiting for a driver finishing nearby (docs/dispatch.md "Candidates and ranking"): the time after
-- which an order no longer waits for one, set at its first such wait (NULL: it never waited). Bounds
-- the whole wait, whichever drivers it waited for and however often it was looked at again.
ALTER TABLE dispatch_jobs ADD COLUMN hold_until TEXT;
