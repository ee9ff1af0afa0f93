-- The public catalog's full-text search (issue 12 item 6, docs/mcp-catalog.md): SQLite FTS5 indexes of
-- the stores and menu items the public may see, kept in step with the tables by triggers, so a write
-- through any path (store actor, CLI, seed, fixtures) is searchable in the same transaction.
--
-- What is indexed is exactly what the catalog may show (privacy by construction, not by filter):
--   * a store is listed unless its settings say "public_listing": false (store settings, docs/stores.md) or its
--     account is suspended (owners.suspended_at, migration 009);
--   * an item is indexed while its store is listed and it is not sold out (the public menu, api-v1 §4.4,
--     omits sold-out items too).
-- Owner contact data (owners.name/email, settings address/phone/email) is never indexed. The catalog
-- queries (src/storage/catalog.ts) still join catalog_listed_stores, so a drifted index cannot leak.
--
-- Choices:
--   * contentless with contentless_delete=1 (SQLite >= 3.43; better-sqlite3 12 ships 3.53): the
--     documents are built from several tables (item + category name + store city), so there is no
--     single external-content table whose values the FTS 'delete' command could be given reliably.
--     Contentless tables delete by rowid alone, so a trigger cannot corrupt the index by passing stale
--     old values, and no copy of the text is stored. Rows are re-read from the base tables for display.
--   * porter over unicode61 with remove_diacritics 2: English stems (pizza finds Pizzas, burger
--     finds Burgers) and accents ignored (cafe finds Café). A prefix index for 3 characters: when
--     whole words find nothing, the last word (3+ characters) is retried as a prefix (type-ahead,
--     "marg" finds Margherita); 3-character prefixes then read one index entry.
--   * filters are columns of the index, not WHERE clauses: city (matched as a phrase at the start of
--     the column) and dietary tags ('vegan', 'halal' from menu_items.is_vegan / is_halal) intersect
--     doclists inside FTS5 instead of filtering every match afterwards (store bm25 weighs the city 0).
--   * FTS5 virtual tables and their shadow tables are not "new tables with generated ids": rowids are
--     the base rows' ids (test/unit/migration-autoincrement.test.ts skips virtual and shadow tables).
-- A later migration that rebuilds stores, menu_items, menu_categories or owners (DROP + RENAME) drops
-- these triggers with the table and must recreate them; the views below name those tables too.

-- Stores the public may see.
CREATE VIEW catalog_listed_stores AS
  SELECT s.* FROM stores s JOIN owners o ON o.id = s.owner_id
  WHERE o.suspended_at IS NULL
    AND (CASE WHEN json_valid(s.settings) THEN json_extract(s.settings, '$.public_listing') END) IS NOT 0;

-- The document of each listed store.
CREATE VIEW catalog_store_docs AS
  SELECT s.id AS id, s.owner_id AS owner_id, s.title AS title, replace(s.store_type, '_', ' ') AS kind,
    coalesce((SELECT group_concat(c.name, ' ') FROM menu_categories c WHERE c.store_id = s.id), '') AS categories,
    coalesce(s.city, '') AS city
  FROM catalog_listed_stores s;

-- The document of each orderable item of a listed store.
CREATE VIEW catalog_item_docs AS
  SELECT i.id AS id, i.store_id AS store_id, s.owner_id AS owner_id, i.name AS name, i.description AS description,
    c.name AS category,
    trim(CASE WHEN i.is_vegan THEN 'vegan ' ELSE '' END || CASE WHEN i.is_halal THEN 'halal' ELSE '' END) AS tags,
    coalesce(s.city, '') AS city
  FROM menu_items i
  JOIN menu_categories c ON c.id = i.category_id
  JOIN catalog_listed_stores s ON s.id = i.store_id
  WHERE i.is_sold_out = 0;

CREATE VIRTUAL TABLE catalog_stores_fts USING fts5(
  title, kind, categories, city,
  content = '', contentless_delete = 1,
  tokenize = 'porter unicode61 remove_diacritics 2', prefix = '3'
);
-- Title matches weigh most, then the kind of store and its category names; city only filters.
INSERT INTO catalog_stores_fts (catalog_stores_fts, rank) VALUES ('rank', 'bm25(8.0, 3.0, 2.0, 0.0)');

CREATE VIRTUAL TABLE catalog_items_fts USING fts5(
  name, description, category, tags, city,
  content = '', contentless_delete = 1,
  tokenize = 'porter unicode61 remove_diacritics 2', prefix = '3'
);
-- Items are not ranked by bm25 (src/storage/catalog.ts TIER_WINDOW says why): tiers by column.

-- Backfill.
INSERT INTO catalog_stores_fts (rowid, title, kind, categories, city)
  SELECT id, title, kind, categories, city FROM catalog_store_docs;
INSERT INTO catalog_items_fts (rowid, name, description, category, tags, city)
  SELECT id, name, description, category, tags, city FROM catalog_item_docs;

-- Menu items: one index row each. Price, position, stock and images are not indexed (prices are
-- filtered on menu_items), so their updates cost nothing here.
CREATE TRIGGER catalog_items_ai AFTER INSERT ON menu_items BEGIN
  INSERT INTO catalog_items_fts (rowid, name, description, category, tags, city)
    SELECT id, name, description, category, tags, city FROM catalog_item_docs WHERE id = new.id;
END;
CREATE TRIGGER catalog_items_au AFTER UPDATE OF name, description, category_id, store_id, is_vegan, is_halal, is_sold_out ON menu_items BEGIN
  DELETE FROM catalog_items_fts WHERE rowid = old.id;
  INSERT INTO catalog_items_fts (rowid, name, description, category, tags, city)
    SELECT id, name, description, category, tags, city FROM catalog_item_docs WHERE id = new.id;
END;
CREATE TRIGGER catalog_items_ad AFTER DELETE ON menu_items BEGIN
  DELETE FROM catalog_items_fts WHERE rowid = old.id;
END;

-- Categories: their names are part of the store's document and of each of their items' documents.
CREATE TRIGGER catalog_categories_ai AFTER INSERT ON menu_categories BEGIN
  DELETE FROM catalog_stores_fts WHERE rowid = new.store_id;
  INSERT INTO catalog_stores_fts (rowid, title, kind, categories, city)
    SELECT id, title, kind, categories, city FROM catalog_store_docs WHERE id = new.store_id;
END;
CREATE TRIGGER catalog_categories_au AFTER UPDATE OF name, store_id ON menu_categories BEGIN
  DELETE FROM catalog_stores_fts WHERE rowid IN (old.store_id, new.store_id);
  INSERT INTO catalog_stores_fts (rowid, title, kind, categories, city)
    SELECT id, title, kind, categories, city FROM catalog_store_docs WHERE id IN (old.store_id, new.store_id);
  DELETE FROM catalog_items_fts WHERE rowid IN (SELECT id FROM menu_items WHERE category_id = new.id);
  INSERT INTO catalog_items_fts (rowid, name, description, category, tags, city)
    SELECT d.id, d.name, d.description, d.category, d.tags, d.city
    FROM menu_items i JOIN catalog_item_docs d ON d.id = i.id WHERE i.category_id = new.id;
END;
CREATE TRIGGER catalog_categories_ad AFTER DELETE ON menu_categories BEGIN
  DELETE FROM catalog_stores_fts WHERE rowid = old.store_id;
  INSERT INTO catalog_stores_fts (rowid, title, kind, categories, city)
    SELECT id, title, kind, categories, city FROM catalog_store_docs WHERE id = old.store_id;
END;

-- Stores: a new store is listed at once (it has no items yet).
CREATE TRIGGER catalog_stores_ai AFTER INSERT ON stores BEGIN
  INSERT INTO catalog_stores_fts (rowid, title, kind, categories, city)
    SELECT id, title, kind, categories, city FROM catalog_store_docs WHERE id = new.id;
END;
-- Title, kind, city or listing changed: the store's document. Other settings changes (hours, fees)
-- fire nothing: the WHEN clause compares only what the documents contain.
CREATE TRIGGER catalog_stores_au AFTER UPDATE OF title, store_type, city, settings, owner_id ON stores
WHEN old.title IS NOT new.title OR old.store_type IS NOT new.store_type OR old.city IS NOT new.city
  OR old.owner_id IS NOT new.owner_id
  OR ((CASE WHEN json_valid(old.settings) THEN json_extract(old.settings, '$.public_listing') END) IS NOT 0)
    <> ((CASE WHEN json_valid(new.settings) THEN json_extract(new.settings, '$.public_listing') END) IS NOT 0)
BEGIN
  DELETE FROM catalog_stores_fts WHERE rowid = new.id;
  INSERT INTO catalog_stores_fts (rowid, title, kind, categories, city)
    SELECT id, title, kind, categories, city FROM catalog_store_docs WHERE id = new.id;
END;
-- City or listing changed: every item of the store (their documents carry the city, and a hidden
-- store has none indexed).
CREATE TRIGGER catalog_stores_au_items AFTER UPDATE OF city, settings, owner_id ON stores
WHEN old.city IS NOT new.city OR old.owner_id IS NOT new.owner_id
  OR ((CASE WHEN json_valid(old.settings) THEN json_extract(old.settings, '$.public_listing') END) IS NOT 0)
    <> ((CASE WHEN json_valid(new.settings) THEN json_extract(new.settings, '$.public_listing') END) IS NOT 0)
BEGIN
  DELETE FROM catalog_items_fts WHERE rowid IN (SELECT id FROM menu_items WHERE store_id = new.id);
  INSERT INTO catalog_items_fts (rowid, name, description, category, tags, city)
    SELECT id, name, description, category, tags, city FROM catalog_item_docs WHERE store_id = new.id;
END;
-- Its items leave through the cascade to menu_items (whose delete trigger fires).
CREATE TRIGGER catalog_stores_ad AFTER DELETE ON stores BEGIN
  DELETE FROM catalog_stores_fts WHERE rowid = old.id;
END;

-- Accounts: suspension hides every store and item of the account; lifting it lists them again.
CREATE TRIGGER catalog_owners_au AFTER UPDATE OF suspended_at ON owners
WHEN (old.suspended_at IS NULL) <> (new.suspended_at IS NULL)
BEGIN
  DELETE FROM catalog_stores_fts WHERE rowid IN (SELECT id FROM stores WHERE owner_id = new.id);
  INSERT INTO catalog_stores_fts (rowid, title, kind, categories, city)
    SELECT id, title, kind, categories, city FROM catalog_store_docs WHERE owner_id = new.id;
  DELETE FROM catalog_items_fts WHERE rowid IN (SELECT i.id FROM menu_items i JOIN stores s ON s.id = i.store_id WHERE s.owner_id = new.id);
  INSERT INTO catalog_items_fts (rowid, name, description, category, tags, city)
    SELECT id, name, description, category, tags, city FROM catalog_item_docs WHERE owner_id = new.id;
END;
