/**
 * Idempotent order creation has one owner (issue 33 item 2; api-v1 §2.4): the pure rule in
 * src/domain/idempotency.ts (key choice, scope, request hash, the decision, the website checkout's
 * key) and the store actor's keeper in src/actors/store-idempotency.ts (keys in flight, the
 * `idempotency_keys` table). Every branch of the rule, the keeper's slots, and that no other module
 * of src decides or touches the table.
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  chooseKey, decideIdempotency, idempotencySlot, keyCaller, MAX_KEY_LENGTH, stableJson, websiteClientUuid, type Idempotency,
} from '../../src/domain/idempotency.ts'
import { checkoutClientUuid, idempotencyOf, idempotencyRefusal, StoreIdempotency } from '../../src/actors/store-idempotency.ts'
import { ApiError } from '../../src/errors.ts'

const k: Idempotency = { scope: 'owner:1/store:3', key: 'k1', hash: 'h1' }
const echo = (text: string) => `#${text}`
/** An order input as the rule sees it (it reads `client_uuid` and hashes the rest). */
const body = (x: Record<string, unknown>) => x as { client_uuid?: string | null }

t.test('the decision: new, replay, reused, in flight', async (t) => {
  t.same(decideIdempotency(k, undefined, undefined), { kind: 'new' }, 'an unknown key is a new order')
  t.same(decideIdempotency(k, undefined, { request_hash: 'h1', order_id: 40 }), { kind: 'replay', orderId: 40 }, 'committed, same request: its order again')
  t.same(decideIdempotency(k, undefined, { request_hash: 'h2', order_id: 40 }), { kind: 'reused' }, 'committed, another request: 422')
  t.same(decideIdempotency(k, 'h1', undefined), { kind: 'in_flight' }, 'committing, same request: 409')
  t.same(decideIdempotency(k, 'h2', undefined), { kind: 'reused' }, 'committing, another request: 422')
  t.same(decideIdempotency(k, 'h1', { request_hash: 'h1', order_id: 40 }), { kind: 'in_flight' }, 'a commit under way is asked before the committed record')
  t.same(decideIdempotency(k, 'h2', { request_hash: 'h1', order_id: 40 }), { kind: 'reused' })
})

t.test('the refusals answer the error catalog', async (t) => {
  const inFlight = idempotencyRefusal('in_flight')
  t.ok(inFlight instanceof ApiError)
  t.match(inFlight, { status: 409, code: 'idempotency_in_flight' })
  const reused = idempotencyRefusal('reused')
  t.match(reused, { status: 422, code: 'idempotency_key_reused', errors: { 'Idempotency-Key': ['This idempotency key was used with a different request body.'] } })
})

t.test('the key: the transport\'s, else client_uuid, 1 to 255 characters, scoped per caller and store', async (t) => {
  const input = { type: 'takeaway', client_uuid: 'body-key' }
  t.same(chooseKey({ caller: 'owner:1', storeId: 3, input: body({ type: 'takeaway' }) }, echo), { ok: true, idem: null }, 'no key: every request is a new order')
  t.same(chooseKey({ caller: 'owner:1', storeId: 3, input: { client_uuid: null } }, echo), { ok: true, idem: null }, 'a null client_uuid is no key')
  t.match(chooseKey({ caller: 'owner:1', storeId: 3, transportKey: 'hdr', input }, echo), { ok: true, idem: { key: 'hdr', scope: 'owner:1/store:3' } }, 'the header wins')
  t.match(chooseKey({ caller: 'customer:9', storeId: 4, input }, echo), { ok: true, idem: { key: 'body-key', scope: 'customer:9/store:4' } }, 'client_uuid otherwise')
  for (const bad of ['', 'x'.repeat(MAX_KEY_LENGTH + 1)]) {
    t.same(chooseKey({ caller: 'owner:1', storeId: 3, transportKey: bad, input }, echo), { ok: false, errors: { 'Idempotency-Key': ['Use a key of 1 to 255 characters.'] } }, `${bad.length} characters`)
    t.throws(() => idempotencyOf({ caller: 'owner:1', storeId: 3, transportKey: bad, input }), { code: 'validation_failed', status: 422 })
  }
  t.match(chooseKey({ caller: 'owner:1', storeId: 3, transportKey: 'x'.repeat(MAX_KEY_LENGTH), input }, echo), { ok: true })
  t.same(chooseKey({ caller: 'owner:1', storeId: 3, input: { client_uuid: '' } }, echo), { ok: false, errors: { 'Idempotency-Key': ['Use a key of 1 to 255 characters.'] } }, 'an empty client_uuid')

  const callers = [keyCaller.owner(1), keyCaller.customer(1), keyCaller.storefront(1), keyCaller.websiteGuest, keyCaller.reservation(1)]
  t.equal(new Set(callers).size, callers.length, 'the callers\' scopes never meet')
  t.same(callers, ['owner:1', 'customer:1', 'storefront:1', 'storefront:0', 'reservation:1'], 'the scopes the stored keys were written with')
  const slots = callers.map((c) => idempotencySlot({ scope: `${c}/store:3`, key: 'same' }))
  t.equal(new Set(slots).size, slots.length, 'one key picked by every caller: as many slots')
})

t.test('the hash: the input as stable JSON, however its keys are ordered; SHA-256 hex as stored', async (t) => {
  t.equal(stableJson({ b: [1, { d: null, c: 'x' }], a: true, u: undefined }), '{"a":true,"b":[1,{"c":"x","d":null}],"u":null}')
  const a = chooseKey({ caller: 'owner:1', storeId: 3, transportKey: 'k', input: body({ type: 'takeaway', items: [{ item_id: 1, quantity: 2 }] }) }, echo)
  const b = chooseKey({ caller: 'owner:1', storeId: 3, transportKey: 'k', input: body({ items: [{ quantity: 2, item_id: 1 }], type: 'takeaway' }) }, echo)
  t.equal(a.ok && a.idem?.hash, '#{"items":[{"item_id":1,"quantity":2}],"type":"takeaway"}', 'the digest is asked over the stable JSON')
  t.equal(a.ok && a.idem?.hash, b.ok && b.idem?.hash, 'reordered keys, same hash')
  const c = chooseKey({ caller: 'owner:1', storeId: 3, transportKey: 'k', input: body({ items: [{ quantity: 3, item_id: 1 }], type: 'takeaway' }) }, echo)
  t.not(a.ok && a.idem?.hash, c.ok && c.idem?.hash, 'another input, another hash')
  // Hashes outlive a deploy in `idempotency_keys`: a retry across an upgrade must hash as before.
  const input = { type: 'takeaway', items: [{ item_id: 1, quantity: 2 }], client_uuid: 'u' }
  t.equal(idempotencyOf({ caller: 'owner:1', storeId: 3, input })?.hash, createHash('sha256').update('{"client_uuid":"u","items":[{"item_id":1,"quantity":2}],"type":"takeaway"}').digest('hex'))
})

t.test('the website checkout\'s key: cart id and the form as posted', async (t) => {
  const form = [{ type: 'takeaway', items: [{ item_id: 1 }] }, null, '', '']
  t.equal(websiteClientUuid('cart1234cart1234', form, echo), `website-cart1234cart1234-${echo(JSON.stringify(form)).slice(0, 16)}`)
  const uuid = checkoutClientUuid('cart1234cart1234', form)
  t.equal(uuid, `website-cart1234cart1234-${createHash('sha256').update(JSON.stringify(form)).digest('base64url').slice(0, 16)}`, 'as the checkout always made it')
  t.equal(checkoutClientUuid('cart1234cart1234', form), uuid, 'the same form posted again: the same key')
  t.not(checkoutClientUuid('cart1234cart1234', [...form.slice(0, 3), '7']), uuid, 'a changed form: another key')
  t.not(checkoutClientUuid('cart5678cart5678', form), uuid, 'another cart: another key')
})

t.test('the store actor\'s keeper: a key is in flight from hold to release, committed keys are read through it', async (t) => {
  const finds: string[] = []
  const keys = new StoreIdempotency({ find: (scope, key) => { finds.push(`${scope}|${key}`); return key === 'done' ? { request_hash: 'h', order_id: 7 } : undefined } })
  t.equal(keys.inFlight(null), undefined)
  t.equal(keys.seen(null), undefined)
  t.equal(keys.hold(null), null, 'an order without a key holds nothing')
  t.equal(keys.inFlight(k), undefined)
  const slot = keys.hold(k)
  t.equal(slot, idempotencySlot(k))
  t.equal(keys.inFlight(k), 'h1', 'held: the request\'s hash')
  t.equal(keys.inFlight({ ...k, scope: 'customer:9/store:3' }), undefined, 'another caller\'s key of the same name is not held')
  t.same(decideIdempotency({ ...k, hash: 'h1' }, keys.inFlight(k), keys.seen(k)), { kind: 'in_flight' })
  keys.release(slot)
  keys.release(null)
  t.equal(keys.inFlight(k), undefined, 'released when the commit settles')
  t.same(keys.seen({ ...k, key: 'done' }), { request_hash: 'h', order_id: 7 })
  t.same(finds, [`${k.scope}|k1`, `${k.scope}|done`], 'committed keys are read by scope and key')
})

/** Every .ts file under src. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? filesUnder(p) : p.endsWith('.ts') ? [p] : []
  })
}

t.test('nothing else in src decides idempotency or touches its table', async (t) => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url))
  const OWNERS = new Set(['domain/idempotency.ts', 'actors/store-idempotency.ts'])
  const rules: Array<[RegExp, string, Set<string>]> = [
    [/\bfindIdempotency\b|\binsertIdempotency\b/, 'the idempotency_keys statements', new Set(['storage/orders.ts'])],
    [/\bidempotency_keys\b/, 'the idempotency_keys table', new Set(['storage/orders.ts', 'storage/prune.ts'])],
    [/'idempotency_in_flight'|'idempotency_key_reused'|ERROR_CATALOG\.idempotency/, 'the refusals', new Set(['errors.ts'])],
    [/\.client_uuid\b|client_uuid:\s*`/, 'the key choice (client_uuid)', new Set()],
    [/\.request_hash\b|createHash\([^)]*\)\.update\(stableJson/, 'the request hash and its comparison', new Set()],
    [/\bpending\.(get|set)\(\s*idempotencySlot/, 'keys in flight', new Set()],
  ]
  for (const file of filesUnder(src)) {
    const rel = relative(src, file).replaceAll('\\', '/')
    if (OWNERS.has(rel) || rel.startsWith('storage/migrations/')) continue
    const text = readFileSync(file, 'utf8')
    for (const [re, what, allowed] of rules) {
      if (!allowed.has(rel)) t.notMatch(text, re, `${rel} leaves ${what} to src/domain/idempotency.ts and src/actors/store-idempotency.ts`)
    }
  }
})
