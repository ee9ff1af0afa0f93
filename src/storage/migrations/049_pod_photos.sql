-- Proof-of-delivery photos in the database (issue 35; docs/drivers.md "Proof of delivery"): the
-- bytes a driver uploaded, durable with the write that stores them and, in cluster mode, replicated
-- like any other row (`bytes` is declared BLOB, so the change capture carries it as hex). Before this
-- the photos were files under `<data dir>/pod/`; `deliveries.photo_path` keeps naming a photo by the
-- same relative path (`pod/<order>-<random>.<ext>`), which is now this table's key. A delivery whose
-- path has no row here is an older upload: it is still read from its file (src/storage/pod-photos.ts).
-- A row is written before the order names it; the order write that replaces it removes the old row
-- (src/storage/drivers.ts `deliveryWriter`). A rowid table, its rows being large, with `bytes` last:
-- reading the other columns never walks a photo's overflow pages.
CREATE TABLE pod_photos (
  path        TEXT PRIMARY KEY,
  order_id    INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  type        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  bytes       BLOB NOT NULL
);
CREATE INDEX pod_photos_order ON pod_photos(order_id);
-- The retention prune looks for rows no delivery names among the last two days' uploads only
-- (src/storage/prune.ts): the bytes of an upload whose order write never came (a crash between the two).
CREATE INDEX pod_photos_created ON pod_photos(created_at);
