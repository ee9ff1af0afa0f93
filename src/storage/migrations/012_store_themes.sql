-- A store's website theme (issue 15, docs/themes.md "Choosing and customising a store's theme"):
-- which theme the owner chose, the owner's setting values per theme, an optional uploaded custom
-- theme, and the problems the website met rendering it. One row per store, created on the first
-- change; a store without a row renders the builtin theme its `stores.template` names.
CREATE TABLE store_themes (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  store_id            INTEGER NOT NULL UNIQUE REFERENCES stores(id),
  -- 'classic', 'market' (builtin) or 'custom'; stores.template is kept equal in the same transaction.
  template            TEXT NOT NULL,
  -- JSON {theme name: {settings: {id: value}, sections: {name: {settings?, blocks?}}}}: values are
  -- kept per theme, so switching themes and back loses nothing.
  theme_values        TEXT NOT NULL DEFAULT '{}',
  -- The uploaded custom theme: JSON {path: text}; NULL when none. Only valid themes are stored.
  custom_files        TEXT,
  custom_uploaded_at  TEXT,
  -- JSON [{file, line, column?, code, message}]: what the website reported when the chosen theme
  -- failed at render time; cleared by every owner change of the theme.
  render_problems     TEXT NOT NULL DEFAULT '[]',
  -- Bumped by every write: the key of the compiled-theme cache (src/ops/web/store-theme.ts).
  version             INTEGER NOT NULL DEFAULT 1,
  updated_at          TEXT NOT NULL
);
