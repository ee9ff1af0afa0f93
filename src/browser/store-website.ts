/**
 * The store website's one script (issue 15 item 3: "a small script for the cart"; TypeScript since
 * issue 33 item 4), inlined with the page's CSP nonce into every website page
 * (src/http/pages/website-script.ts). It only enhances: every form works without it.
 *
 * - Adding to the cart (`form[data-add-to-cart]`) posts the same form in the background (the server
 *   answers JSON to `Accept: application/json`) and updates the cart count in place instead of
 *   reloading; any failure falls back to the plain form post.
 * - On the checkout (`form[data-checkout]`, issue 34 item 6) it keeps the breakdown true as the
 *   customer chooses: the tip, the chosen saved address's delivery fee, and the total with both, in
 *   the store's currency (without it the page shows the cart's total and "by address" for the fee).
 */

/** The answer to an add-to-cart post asking for JSON (src/http/routes/website.ts). */
interface CartAnswer { item_count: number; message: string }

document.addEventListener('submit', (e) => {
  const f = e.target
  if (!(f instanceof HTMLFormElement) || !f.matches('[data-add-to-cart]')) return
  e.preventDefault()
  void addToCart(f)
})

async function addToCart(f: HTMLFormElement): Promise<void> {
  const button = f.querySelector<HTMLButtonElement | HTMLInputElement>('[type=submit]')
  if (button) button.disabled = true
  try {
    const body = new URLSearchParams([...new FormData(f)].map(([k, v]) => [k, String(v)]))
    const r = await fetch(f.action, { method: 'POST', body, headers: { Accept: 'application/json' }, credentials: 'same-origin' })
    const answer = await r.json() as CartAnswer
    document.querySelectorAll('[data-cart-count]').forEach((n) => { n.textContent = String(answer.item_count) })
    let status = f.querySelector('[data-status]')
    if (!status) {
      status = document.createElement('p')
      status.setAttribute('role', 'status')
      status.setAttribute('data-status', '')
      f.appendChild(status)
    }
    status.textContent = answer.message
  } catch {
    f.submit()
  } finally {
    if (button) button.disabled = false
  }
}

/** The checkout's breakdown from what is chosen now: tip, delivery fee, total (amounts in minor units on the form). */
function total(f: HTMLFormElement): void {
  const currency = f.getAttribute('data-currency') || 'USD'
  let fmt: Intl.NumberFormat
  try {
    fmt = new Intl.NumberFormat('en', { style: 'currency', currency })
  } catch {
    fmt = new Intl.NumberFormat('en', { minimumFractionDigits: 2 })
  }
  const unit = Math.pow(10, fmt.resolvedOptions().maximumFractionDigits ?? 2)
  const money = (n: number) => fmt.format(n / unit)
  const typeInput = f.querySelector<HTMLInputElement>('[name=type]:checked') ?? f.querySelector<HTMLSelectElement>('select[name=type]')
  const type = typeInput ? typeInput.value : ''
  const tipInput = f.querySelector<HTMLInputElement>('[name=tip]')
  let tip = tipInput && tipInput.value ? Math.round(parseFloat(tipInput.value) * unit) : 0
  if (!(tip >= 0)) tip = 0
  let fee: number | null = 0
  if (type === 'delivery') {
    fee = null
    const typed = f.querySelector<HTMLInputElement>('[name=address]')
    const chosen = f.querySelector<HTMLSelectElement>('select[name=address_id]')?.selectedOptions[0]
    if (!(typed && typed.value.trim()) && chosen && chosen.getAttribute('data-fee') !== '') fee = Number(chosen.getAttribute('data-fee'))
  }
  const set = (sel: string, text: string) => { const n = f.querySelector(sel); if (n) n.textContent = text }
  set('[data-amount=tip]', money(tip))
  set('[data-amount=delivery_fee]', fee === null ? 'by address' : money(fee))
  set('[data-total]', money(Number(f.getAttribute('data-base')) + tip + (fee ?? 0)) + (fee === null ? ' + delivery' : ''))
}

function retotal(e: Event): void {
  const f = e.target instanceof Element ? e.target.closest<HTMLFormElement>('form[data-checkout]') : null
  if (f) total(f)
}
document.addEventListener('input', retotal)
document.addEventListener('change', retotal)
document.querySelectorAll<HTMLFormElement>('form[data-checkout]').forEach(total)
