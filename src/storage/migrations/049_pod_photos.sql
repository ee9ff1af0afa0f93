-- Proof-of-delivery photos in the database (issue 35; docs/drivers.md "Proof of delivery"): the
-- bytes a driver uploaded, durable with the write that stores them and, in cluster mode, replicated
-- like any other row (`bytes` is declared BLOB, so the change capture carries it as hex). Before this
-- the photos were files under `<data dir>/pod/`; `deliveries.photo_path` keeps naming a photo by the
-- same relative path (`pod/<order>-<random>.<ext>`), which is now this table's key. A delivery whose
-- path has no row here is an older upload: it is still read from its file (src/storage/pod-photos.ts).
-- A row is written before the order names it; the order write that replaces it removes the old row
-- (src/storage/drivers.ts `deliveryWriter`). A rowid table: its rows are large.
CREATE TABLE pod_photos (
  path        TEXT PRIMARY KEY,
  order_id    INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  type        TEXT NOT NULL,
  bytes       BLOB NOT NULL,
  created_at  TEXT NOT NULL
);
CREATE INDEX pod_photos_order ON pod_photos(order_id);
