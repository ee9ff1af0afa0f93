-- Webhook endpoint health (docs/webhooks.md "Circuit breaker"): what the endpoint actor's breaker
-- knows, kept so the dashboard can show it and a restart keeps an open circuit open.
-- Written in batches with the attempt records (src/webhooks/attempt-log.ts), and cleared by resume.

-- Failed attempts in a row since the last success.
ALTER TABLE webhook_endpoints ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
-- ISO 8601: the first failure after the last success (NULL while healthy).
ALTER TABLE webhook_endpoints ADD COLUMN failing_since TEXT;
-- ms since the epoch: non-NULL while the circuit is open; no attempt before it, then one probe.
ALTER TABLE webhook_endpoints ADD COLUMN circuit_open_until INTEGER;
-- Failed continuously for WEBHOOK_DISABLE_AFTER_MS: nothing is sent or queued until resumed.
ALTER TABLE webhook_endpoints ADD COLUMN disabled_at TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT;
