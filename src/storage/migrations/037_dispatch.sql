-- Automatic dispatch (issue 37 item 3; docs/dispatch.md "Policy"): one row per delivery order the
-- dispatcher works on, so a restart in the middle of an offer cascade resumes where it was: the
-- open offer, the drivers already asked, and every decision with its candidates (the explain view).
CREATE TABLE dispatch_jobs (
  order_id    INTEGER PRIMARY KEY REFERENCES orders(id) ON DELETE CASCADE,
  store_id    INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  mode        TEXT NOT NULL CHECK (mode IN ('offer', 'auto')),
  state       TEXT NOT NULL CHECK (state IN ('waiting', 'offered', 'assigned', 'closed')),
  due_at      TEXT,                          -- ISO: not offered before this (ready time minus the best travel time)
  offer_id    INTEGER,                       -- the open offer while `offered`
  tried       TEXT NOT NULL DEFAULT '[]',    -- JSON [driver_id]: drivers already offered this order
  decisions   TEXT NOT NULL DEFAULT '[]',    -- JSON [{at, action, driver_id?, candidates, excluded, router}], newest last (at most 20)
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX dispatch_jobs_open ON dispatch_jobs(state) WHERE state IN ('waiting', 'offered');
CREATE INDEX dispatch_jobs_store ON dispatch_jobs(store_id);
