/**
 * The website's address form as operation input (src/ops/web/website.ts `addressFormInput`, issue 34
 * item 4): the pin's hidden lat/lng win; without them a place chosen from the search gives the
 * position and its label; junk stays NaN for the operation to refuse with the field named; and what
 * the search says on the page.
 */
import t from 'tap'
import { addressFormInput, foundMessage } from '../../src/ops/web/website.ts'

t.test('lat/lng from the pin; a chosen place without them; junk left for the operation', async (t) => {
  t.same(addressFormInput({ address: ' 5 Elm Road ', lat: '52.53', lng: '13.43', notes: ' Ring twice ', label: '', is_default: 'on' }),
    { label: null, address: ' 5 Elm Road ', lat: 52.53, lng: 13.43, notes: 'Ring twice', is_default: true })
  t.same(addressFormInput({ address: 'elm', place: '52.4,-13.1,5 Elm Road, Potsdam, 14467' }), { label: null, address: '5 Elm Road, Potsdam, 14467', lat: 52.4, lng: -13.1, notes: null, is_default: false },
    'a chosen place (no JavaScript): its position, its label as the address (commas in the label kept)')
  t.match(addressFormInput({ address: 'elm', lat: '1', lng: '2', place: '52.4,13.1,Potsdam' }), { address: 'elm', lat: 1, lng: 2 }, 'the pin (moved after choosing) wins over the place')
  t.match(addressFormInput({ address: 'x', lat: '', lng: '' }), { lat: null, lng: null }, 'no position')
  t.match(addressFormInput({ address: 'x', lat: '1' }), { lat: 1, lng: null }, 'half a position is passed on, for the operation to refuse')
  const junk = addressFormInput({ address: 'x', lat: 'north', lng: '2' })
  t.ok(Number.isNaN(junk.lat), 'not a number stays NaN (refused by the operation, not dropped)')
  t.match(addressFormInput({ address: 'x', place: 'javascript:alert(1)' }), { address: 'x', lat: null, lng: null }, 'a place that is not lat,lng,label is ignored')
})

t.test('what the search says', async (t) => {
  t.equal(foundMessage({ places: [{}], failure: null, source: 'nominatim' }), 'Is this the place? Save it, or move the pin.')
  t.equal(foundMessage({ places: [{}, {}], failure: null, source: 'nominatim' }), 'Which place is it? 2 found.')
  t.match(foundMessage({ places: [], failure: null, source: 'nominatim' }), /^No place found/)
  t.match(foundMessage({ places: [], failure: 'nominatim answered 503', source: 'nominatim' }), /not answering right now/, 'a failure is said plainly, without the reason\'s details')
})
