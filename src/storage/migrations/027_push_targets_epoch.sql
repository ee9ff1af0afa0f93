-- Issue 19 item 1: the staff push reaction (src/reactions/staff-push.ts) needs the store's push
-- targets (devices of members who work orders or the kitchen) for every new order. It keeps them
-- per store under the auth epoch of migration 025, so these changes count there too, whichever
-- connection writes them (the CLI included): a removed device, member or permission is not pushed
-- to after its change commits, a new device is pushed to from its first order on. The staff
-- columns counted are only the ones the targets depend on (sign-ins write others).
CREATE TRIGGER staff_devices_epoch_insert AFTER INSERT ON staff_devices BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER staff_devices_epoch_update AFTER UPDATE ON staff_devices BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER staff_devices_epoch_delete AFTER DELETE ON staff_devices BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER staff_epoch_update AFTER UPDATE OF store_id, role, permissions ON staff BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER staff_epoch_delete AFTER DELETE ON staff BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
