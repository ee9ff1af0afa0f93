/**
 * Migration 033 (issue 36) on a database that already has apps: `apps` is rebuilt (agents need no
 * developer) with every row, id and AUTOINCREMENT counter kept, the installations, codes and tokens
 * pointing at it still valid, and a new app never takes a deleted app's id.
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { migrate, readMigrations } from '../../src/storage/db.ts'

const all = readMigrations()
const db = new Database(':memory:')
db.pragma('foreign_keys = ON')
migrate(db, all.filter((m) => m.version < 33))
const now = '2026-11-01T00:00:00.000+00:00'
const owner = Number(db.prepare("INSERT INTO owners (name, email, created_at) VALUES ('Dev', 'dev@example.test', ?)").run(now).lastInsertRowid)
const terms = JSON.stringify({ scopes: ['menu:read'], pricing: 'free', price: 0, cap: null, currency: 'USD' })
const app = (n: number) => Number(db.prepare(`INSERT INTO apps (developer_id, name, redirect_uris, client_id, client_secret, webhook_secret, status, terms, published_terms, created_at, updated_at)
  VALUES (?, ?, '["https://a.example/cb"]', ?, 's', 'w', 'published', ?, ?, ?, ?)`).run(owner, `App ${n}`, `app_${n}`, terms, terms, now, now).lastInsertRowid)
const first = app(1)
const second = app(2)
db.prepare('DELETE FROM apps WHERE id = ?').run(second)
const inst = Number(db.prepare("INSERT INTO app_installations (app_id, owner_id, scopes, terms, installed_at) VALUES (?, ?, '[\"menu:read\"]', ?, ?)").run(first, owner, terms, now).lastInsertRowid)
const code = Number(db.prepare("INSERT INTO oauth_codes (code_hash, app_id, installation_id, redirect_uri, scopes, created_at, expires_at) VALUES ('h', ?, ?, 'https://a.example/cb', '[]', ?, ?)").run(first, inst, now, now).lastInsertRowid)
db.prepare("INSERT INTO app_tokens (token_hash, kind, installation_id, grant_id, scopes, created_at) VALUES ('t', 'access', ?, ?, '[]', ?)").run(inst, code, now)

t.same(migrate(db, all), all.filter((m) => m.version >= 33).map((m) => m.version), 'applies from 033 on')
t.match(db.prepare('SELECT id, developer_id, name, kind, metadata_url FROM apps').all(), [{ id: first, developer_id: owner, name: 'App 1', kind: 'app', metadata_url: null }], 'the app is kept, as an app')
t.same(db.pragma('foreign_key_check'), [], 'installations, codes and tokens still point at it')
t.equal(db.prepare('SELECT resource FROM app_tokens').pluck().get(), null, 'old tokens have no audience')
t.ok(Number(db.prepare(`INSERT INTO apps (developer_id, name, redirect_uris, client_id, client_secret, webhook_secret, terms, created_at, updated_at, kind)
  VALUES (NULL, 'Agent', '[]', 'agt_1', 's', 'w', ?, ?, ?, 'agent')`).run(terms, now, now).lastInsertRowid) > second, 'a new id never reuses a deleted one')
t.throws(() => db.prepare(`INSERT INTO apps (developer_id, name, redirect_uris, client_id, client_secret, webhook_secret, terms, created_at, updated_at)
  VALUES (NULL, 'Orphan', '[]', 'app_x', 's', 'w', ?, ?, ?)`).run(terms, now, now), /CHECK/, 'only agents go without a developer')
t.ok(db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'apps_by_developer'").get(), 'indexes recreated')
