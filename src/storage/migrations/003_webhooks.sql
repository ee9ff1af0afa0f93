-- Webhooks (api-v1 §2.7 "Webhook endpoint", §4.2, §6; docs/webhooks.md).
-- Timestamps ISO 8601 UTC; scheduling times (next_attempt_at) are integer milliseconds since the epoch.

CREATE TABLE webhook_endpoints (
  id             INTEGER PRIMARY KEY,
  owner_id       INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  url            TEXT NOT NULL,
  events         TEXT NOT NULL,              -- JSON array: event names, "*", "<family>.*"
  -- The signing secret has to be used raw (HMAC), so unlike tokens it cannot be stored as a hash.
  secret         TEXT NOT NULL,              -- whsec_<base64>
  -- Events up to this outbox id happened before the endpoint existed and are not delivered to it.
  from_event_id  INTEGER NOT NULL,
  paused_at      TEXT,                       -- non-NULL: paused (deliveries queue up, nothing is sent)
  created_at     TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints(owner_id, id);

-- One row per (event, endpoint); msg_id is fixed here, before the first attempt, and reused by every
-- retry. A re-queue is a new row with a new msg_id pointing at the original (requeued_from).
CREATE TABLE webhook_deliveries (
  id               INTEGER PRIMARY KEY,
  endpoint_id      INTEGER NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  msg_id           TEXT NOT NULL,            -- 128 random bits: unique without an index to maintain
  event_id         INTEGER,                  -- outbox id; NULL for ping and re-queues
  event            TEXT NOT NULL,
  body             TEXT NOT NULL,            -- the exact JSON sent: {id, event, created_at, data}
  status           TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER,                  -- ms since the epoch while pending, else NULL
  requeued_from    INTEGER REFERENCES webhook_deliveries(id) ON DELETE SET NULL,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  UNIQUE (event_id, endpoint_id)
);
-- Few indexes: every delivery row is written once and updated once per attempt, thousands a second.
-- Pending rows only, earliest due first: what an endpoint actor loads; rows leave it when done.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(endpoint_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, id);

-- Every attempt (api-v1 §6 rule 4): HTTP status (NULL on timeout or refusal), the error, an excerpt.
CREATE TABLE webhook_attempts (
  id                INTEGER PRIMARY KEY,
  delivery_id       INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt           INTEGER NOT NULL,
  http_status       INTEGER,
  error             TEXT,
  response_excerpt  TEXT NOT NULL DEFAULT '',
  duration_ms       INTEGER NOT NULL,
  created_at        TEXT NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, attempt);

-- The fan-out cursor: every outbox row up to last_event_id has its delivery rows. Advanced in the
-- same transaction that writes them, so a crash neither loses nor doubles a delivery.
CREATE TABLE webhook_cursor (
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  last_event_id  INTEGER NOT NULL
);
INSERT INTO webhook_cursor (id, last_event_id) SELECT 1, COALESCE(MAX(id), 0) FROM outbox;
