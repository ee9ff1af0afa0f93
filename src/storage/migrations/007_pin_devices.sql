-- Enrolled PIN devices (issue 10 #8; docs/staff.md "PIN devices"). PIN sign-in used to take any
-- device name, and a store-wide counter of wrong PINs (staff_pin_failures, device '*') let anyone
-- lock every screen of a store. Now a manager enrolls a device once and it receives a random key
-- (shown once, only its SHA-256 kept, like every token); PIN sign-in needs that key, and wrong
-- PINs are counted on the device's own row, so only a holder of the key can lock that device.

CREATE TABLE staff_pin_devices (
  id                    INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id              INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  name                  TEXT NOT NULL,
  key_hash              TEXT NOT NULL UNIQUE,
  -- The first characters of the key (family prefix and 4 more), to tell devices apart in lists.
  key_hint              TEXT NOT NULL,
  enrolled_by           TEXT NOT NULL CHECK (enrolled_by IN ('owner', 'staff')),
  -- The manager who enrolled it (NULL for the owner, or once the member is removed).
  enrolled_by_staff_id  INTEGER REFERENCES staff(id) ON DELETE SET NULL,
  created_at            TEXT NOT NULL,
  last_used_at          TEXT,
  revoked_at            TEXT,
  -- Wrong-PIN lock-out of this device only (src/auth/pin-devices.ts PIN_LOCKOUT).
  failures              INTEGER NOT NULL DEFAULT 0,
  window_start          TEXT,
  locked_until          TEXT
);
CREATE INDEX staff_pin_devices_store ON staff_pin_devices(store_id, id);

-- The device a PIN token was issued through: revoking the device revokes those tokens.
ALTER TABLE staff_tokens ADD COLUMN pin_device_id INTEGER REFERENCES staff_pin_devices(id) ON DELETE CASCADE;
CREATE INDEX staff_tokens_pin_device ON staff_tokens(pin_device_id) WHERE pin_device_id IS NOT NULL;

-- The old counters, including the store-wide row, are gone with the free-form device names.
DROP TABLE staff_pin_failures;
