-- Menu item photos (issue 34 item 10; docs/menu-photos.md): the server's own renditions of an
-- uploaded photo, kept in the database so they are durable with the write that names them and reach
-- every node of a cluster like any other row. `key` is the content hash of the full rendition: a new
-- photo is a new key and so a new URL (/media/items/{key}.jpg), which is cached as immutable.
-- A row lives while an item names it; the menu write that replaces or deletes the last one removes it.
CREATE TABLE menu_photos (
  key          TEXT PRIMARY KEY,
  type         TEXT NOT NULL,
  width        INTEGER NOT NULL,
  height       INTEGER NOT NULL,
  full         BLOB NOT NULL,
  thumb_width  INTEGER NOT NULL,
  thumb_height INTEGER NOT NULL,
  thumb        BLOB NOT NULL,
  created_at   TEXT NOT NULL
) WITHOUT ROWID;

ALTER TABLE menu_items ADD COLUMN photo_key TEXT REFERENCES menu_photos (key);
