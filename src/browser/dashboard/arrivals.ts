// Knowing an order arrived (issue 34 item 11; docs/dashboard.md "Orders"): on the board, a chime
// for each new order (switchable, remembered by this browser), the count of orders waiting in the
// kitchen's `new` status in the tab's title, and a browser notification while the tab is hidden.
// The notification permission is asked only when the owner presses the button (a user gesture),
// never on load. The chime is a short tone made here (no audio file, nothing external), as the
// kitchen screen's.

import type { OrderView } from '../../ws/order-frames.ts'
import { h, money } from './core.js'

const SOUND = 'dashboard.chime'
const NOTIFY = 'dashboard.notify'

/** localStorage, or nothing where it is refused (a private window): the switches then last for the page. */
const saved = new Map<string, string>()
function get(key: string): string | null {
  try { return localStorage.getItem(key) } catch { return saved.get(key) ?? null }
}
function set(key: string, value: string): void {
  try { localStorage.setItem(key, value) } catch { saved.set(key, value) }
}

export interface Arrivals {
  /** The two switches, for the board's heading line. */
  controls: HTMLElement
  /** An order the board had not seen: chime, and a notification when the tab is hidden. */
  arrived(o: OrderView): void
  /** Orders waiting in `new`: shown in the tab's title as `(n) …`. */
  waiting(n: number): void
}

export function arrivals(): Arrivals {
  const title = document.title
  let audio: AudioContext | null = null
  const soundOn = (): boolean => get(SOUND) !== 'off'
  const supported = typeof Notification === 'function'
  const notifyOn = (): boolean => supported && Notification.permission === 'granted' && get(NOTIFY) === 'on'

  // Browsers start audio only after a gesture: the first one on the page readies it.
  const ready = (): void => {
    try {
      audio = audio || new AudioContext()
      if (audio.state === 'suspended') audio.resume().catch(() => {})
    } catch { /* no audio here: the card still appears */ }
  }
  document.addEventListener('pointerdown', ready, { once: true })
  document.addEventListener('keydown', ready, { once: true })
  const chime = (): void => {
    ready()
    if (!audio) return
    try {
      const osc = audio.createOscillator(), gain = audio.createGain()
      osc.frequency.value = 660; gain.gain.value = 0.2
      osc.connect(gain).connect(audio.destination)
      osc.start(); osc.stop(audio.currentTime + 0.3)
    } catch { /* as above */ }
  }

  const sound = h('button', { type: 'button', id: 'chime', on: { click: () => { set(SOUND, soundOn() ? 'off' : 'on'); show() } } })
  const notify = h('button', { type: 'button', id: 'notify', hidden: !supported, on: { click: () => { void toggleNotify() } } })
  async function toggleNotify(): Promise<void> {
    if (notifyOn()) { set(NOTIFY, 'off'); show(); return }
    // Asked here, in the click: the browser shows its own prompt the first time.
    set(NOTIFY, 'on')
    await Notification.requestPermission()
    show()
  }
  function show(): void {
    sound.textContent = soundOn() ? 'Chime on' : 'Chime off'
    sound.setAttribute('aria-pressed', String(soundOn()))
    sound.title = 'A chime when a new order arrives'
    if (!supported) return
    const blocked = Notification.permission === 'denied' && get(NOTIFY) === 'on'
    notify.textContent = blocked ? 'Notifications blocked by this browser' : notifyOn() ? 'Notifications on' : 'Notify me while this tab is hidden'
    notify.setAttribute('aria-pressed', String(notifyOn()))
  }
  show()

  return {
    controls: h('span', { class: 'arrivals' }, sound, ' ', notify),
    arrived(o) {
      if (soundOn()) chime()
      if (document.visibilityState !== 'hidden' || !notifyOn()) return
      const n = new Notification(`New order #${o.id}`, { body: `${o.customer_name || 'Guest'} · ${o.type} · ${money(o.total)}`, tag: `order-${o.id}` })
      n.onclick = () => { window.focus(); n.close() }
    },
    waiting(n) {
      document.title = n > 0 ? `(${n}) ${title}` : title
    },
  }
}
