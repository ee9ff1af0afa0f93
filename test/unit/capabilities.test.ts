/** Owner token capabilities (api-v1 §5): `*`, `read`, `write`, `resource:action`; write implies read. */
import t from 'tap'
import { grants, isValidCapability, RESOURCES, type Capability } from '../../src/domain/capabilities.ts'

const all: Capability[] = RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`] as Capability[])

t.test('* and write grant everything; read grants every read and no write', async (t) => {
  for (const need of all) {
    t.ok(grants(['*'], need), `* → ${need}`)
    t.ok(grants(['write'], need), `write → ${need}`)
    t.ok(grants(['*:write'], need), `*:write → ${need}`)
    t.equal(grants(['read'], need), need.endsWith(':read'), `read → ${need}`)
    t.equal(grants(['*:read'], need), need.endsWith(':read'), `*:read → ${need}`)
  }
})

t.test('resource:action grants its own resource only; :write implies :read', async (t) => {
  for (const held of all) {
    const [hr, ha] = held.split(':')
    for (const need of all) {
      const [nr, na] = need.split(':')
      const expected = hr === nr && (ha === na || ha === 'write')
      t.equal(grants([held], need), expected, `${held} → ${need}`)
    }
  }
})

t.test('several capabilities combine; none grants nothing', async (t) => {
  t.ok(grants(['orders:read', 'analytics:read'], 'analytics:read'))
  t.ok(grants(['orders:read', 'analytics:read'], 'orders:read'))
  t.notOk(grants(['orders:read', 'analytics:read'], 'orders:write'))
  t.notOk(grants([], 'menu:read'))
  t.notOk(grants(['menu'], 'menu:read'), 'a bare resource name is not a capability')
  t.notOk(grants(['bogus:write'], 'menu:read'))
})

t.test('valid capability strings', async (t) => {
  for (const c of ['*', 'read', 'write', '*:read', '*:write', ...all]) t.ok(isValidCapability(c), c)
  for (const c of ['', 'admin', 'orders', 'orders:delete', 'order:write', 'menu:read ', 'READ', '*:*', 'orders:read,menu:read']) t.notOk(isValidCapability(c), JSON.stringify(c))
})
