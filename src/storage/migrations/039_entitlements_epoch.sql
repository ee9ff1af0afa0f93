-- Plan features are checked by every operation that names one (src/ops/op.ts `defineOp`), so a kitchen
-- bump, over HTTP or as a socket frame, asked SQLite whether the account holds `kds` each time. The
-- answer is now cached per auth epoch (src/storage/auth-epoch.ts, src/storage/entitlements.ts): every
-- change of `entitlements` (a plan change syncing them, a grant or revocation by hand, from any
-- connection) moves the counter in the writer's own transaction, so the next check sees it at once.
CREATE TRIGGER entitlements_epoch_insert AFTER INSERT ON entitlements BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER entitlements_epoch_update AFTER UPDATE ON entitlements BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER entitlements_epoch_delete AFTER DELETE ON entitlements BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
