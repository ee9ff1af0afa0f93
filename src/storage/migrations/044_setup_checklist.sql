-- The dashboard's setup checklist (issue 34 item 16; docs/dashboard.md "First steps"): when the
-- owner dismissed it. NULL while it shows; what it ticks is read from the account's own data.
ALTER TABLE owners ADD COLUMN setup_dismissed_at TEXT;
