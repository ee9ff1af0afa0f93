-- Goods catalogue (issue 18 items 2 and 4, docs/verticals.md): brands, stock moves and expiry batches.

-- Brands of a store. `menu_items.brand_id` is the reference; `menu_items.brand` stays as the brand's
-- name (kept in step by src/storage/brands.ts) because the menu shows `brand` by name (api-v1 §2.3).
CREATE TABLE brands (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id     INTEGER NOT NULL REFERENCES stores(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  slug         TEXT NOT NULL,
  description  TEXT,
  logo_url     TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);

ALTER TABLE menu_items ADD COLUMN brand_id INTEGER REFERENCES brands(id) ON DELETE SET NULL;

-- Existing free-text brands become brand rows, one per store and case-insensitive name.
INSERT INTO brands (store_id, name, slug, created_at, updated_at)
  SELECT store_id, MIN(TRIM(brand)),
    LOWER(REPLACE(REPLACE(REPLACE(TRIM(MIN(TRIM(brand))), ' ', '-'), '/', '-'), '.', '')),
    MIN(created_at), MIN(created_at)
  FROM menu_items WHERE brand IS NOT NULL AND TRIM(brand) <> ''
  GROUP BY store_id, LOWER(TRIM(brand));
-- Two names that slug alike ("A B", "A/B") keep distinct slugs.
UPDATE brands SET slug = slug || '-' || id
  WHERE EXISTS (SELECT 1 FROM brands b WHERE b.store_id = brands.store_id AND b.slug = brands.slug AND b.id < brands.id);
UPDATE brands SET slug = 'brand-' || id WHERE slug = '';
CREATE UNIQUE INDEX brands_store_slug ON brands(store_id, slug);
UPDATE menu_items SET
  brand_id = (SELECT b.id FROM brands b WHERE b.store_id = menu_items.store_id AND LOWER(b.name) = LOWER(TRIM(menu_items.brand))),
  brand = (SELECT b.name FROM brands b WHERE b.store_id = menu_items.store_id AND LOWER(b.name) = LOWER(TRIM(menu_items.brand)))
  WHERE brand IS NOT NULL AND TRIM(brand) <> '';
UPDATE menu_items SET brand = NULL WHERE brand IS NOT NULL AND TRIM(brand) = '';
CREATE INDEX menu_items_brand ON menu_items(brand_id) WHERE brand_id IS NOT NULL;

-- Expiry batches (`expiry` stores: pharmacy, cosmetic). An item with batches sells only unexpired
-- batch quantities, first-expiring first (FEFO); `expires_on` is the store's local date.
CREATE TABLE item_batches (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  item_id      INTEGER NOT NULL REFERENCES menu_items(id) ON DELETE CASCADE,
  batch_code   TEXT,
  expires_on   TEXT NOT NULL,                -- YYYY-MM-DD
  quantity     INTEGER NOT NULL CHECK (quantity >= 0),
  created_at   TEXT NOT NULL
);
CREATE INDEX item_batches_item ON item_batches(item_id, expires_on, id);

-- What each order took from stock (item, variant, batch), written in the order's transaction, so a
-- cancellation or refund puts back exactly that and only once (rows are deleted as they are restored).
-- No foreign keys to items, variants or batches: they may be deleted while the order lives on.
CREATE TABLE stock_moves (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  order_id     INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
  line_index   INTEGER NOT NULL,             -- position of the line in the order
  item_id      INTEGER NOT NULL,
  variant_id   INTEGER,
  batch_id     INTEGER,
  -- Which counter was decremented: 'item' (menu_items.stock), 'variant' (item_variants.stock) or 'batch'.
  counter      TEXT NOT NULL CHECK (counter IN ('item', 'variant', 'batch')),
  quantity     INTEGER NOT NULL CHECK (quantity > 0)
);
CREATE INDEX stock_moves_order ON stock_moves(order_id);
