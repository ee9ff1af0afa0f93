-- Fitments and age-restricted items (issue 18 items 3 and 4; docs/verticals.md "Fitments",
-- "Age-restricted items"). Only stores whose vertical has the `fitment` capability (car parts) hold
-- fitments; the rule is in src/ops/menu/fitments.ts, the schema does not repeat it.

-- A vehicle a part fits: make, model, an inclusive model-year range and optionally an engine (NULL:
-- every engine of that model and years). Make, model and engine compare case-insensitively (ASCII
-- NOCASE), so "VW"/"vw" and "Golf"/"GOLF" are the same vehicle for the filter and its index.
CREATE TABLE fitments (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id    INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  make        TEXT NOT NULL COLLATE NOCASE,
  model       TEXT NOT NULL COLLATE NOCASE,
  year_from   INTEGER NOT NULL,
  year_to     INTEGER NOT NULL,
  engine      TEXT COLLATE NOCASE,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  CHECK (year_from <= year_to)
);
-- The vehicle filter (make = ? AND model = ? AND year_from <= ? AND year_to >= ?) is a range scan
-- on this index; the listing's make/model filters and ordering use its prefix.
CREATE INDEX fitments_vehicle ON fitments(store_id, make, model, year_from, year_to);

-- Which items fit which vehicles (many-to-many). Both directions are indexed: the filter goes
-- fitment → items, an item's own fitments item → fitment.
CREATE TABLE fitment_items (
  fitment_id  INTEGER NOT NULL REFERENCES fitments(id) ON DELETE CASCADE,
  item_id     INTEGER NOT NULL REFERENCES menu_items(id) ON DELETE CASCADE,
  PRIMARY KEY (fitment_id, item_id)
);
CREATE INDEX fitment_items_item ON fitment_items(item_id, fitment_id);

-- Items that fit every vehicle (oil, wiper fluid, a tyre gauge): a vehicle filter keeps them.
-- One row per item (UNIQUE); the row has no id of its own.
CREATE TABLE fitment_universal (
  item_id     INTEGER NOT NULL UNIQUE REFERENCES menu_items(id) ON DELETE CASCADE,
  store_id    INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE
);
CREATE INDEX fitment_universal_store ON fitment_universal(store_id, item_id);

-- The minimum age to buy an item (age_gate verticals: retail, pharmacy); NULL: not restricted. An
-- order holding one needs `age_confirmed: true` (src/domain/age-gate.ts).
ALTER TABLE menu_items ADD COLUMN min_age INTEGER CHECK (min_age IS NULL OR min_age BETWEEN 1 AND 99);
