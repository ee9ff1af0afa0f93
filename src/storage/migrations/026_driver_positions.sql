-- Issue 19 item 2: a driver's latest position moves out of the `drivers` row into a narrow table of
-- its own. Positions are the most written rows of the server (one per moving driver every second or
-- so, src/storage/driver-locations.ts); rewriting the whole profile row (token hash, name, phone, …)
-- for each cost ~2× the user CPU and ~2× the WAL bytes of a row holding only the position, as
-- different drivers' rows dirty different pages. The driver's reads join it back (src/storage/drivers.ts),
-- so every answer stays the same; a driver without a position has no row here.
CREATE TABLE driver_positions (
  driver_id            INTEGER PRIMARY KEY REFERENCES drivers(id) ON DELETE CASCADE,
  lat                  REAL,
  lng                  REAL,
  location_updated_at  TEXT
);
INSERT INTO driver_positions (driver_id, lat, lng, location_updated_at)
  SELECT id, lat, lng, location_updated_at FROM drivers
  WHERE lat IS NOT NULL OR lng IS NOT NULL OR location_updated_at IS NOT NULL;
ALTER TABLE drivers DROP COLUMN lat;
ALTER TABLE drivers DROP COLUMN lng;
ALTER TABLE drivers DROP COLUMN location_updated_at;
