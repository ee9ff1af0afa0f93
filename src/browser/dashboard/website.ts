// The Website page (issue 34 item 12; docs/dashboard.md "Website"): the theme picker, the settings
// of the chosen theme and of each of its sections as a form generated from their schemas
// (`GET …/themes`), and a live preview of the store's own website in a frame. Every change is checked
// by the API (`POST …/theme/preview`, the same checks as saving: its messages are shown by the field)
// and then posted by the browser into the frame (`POST /dashboard/stores/{id}/theme-preview`), which
// draws the page with the unsaved values; nothing is published until *Apply* (`PUT …/theme`).
// Never sets inline styles (the page's CSP has no 'unsafe-inline'): classes only.

import { CSRF, SITE, act, api, h, say, theStore, view, S, type ApiFailure, type Json } from './core.js'

interface Setting { type: string; id?: string; label?: string; default?: unknown; info?: string; options?: Array<{ value: string; label: string }>; min?: number; max?: number; step?: number; unit?: string; placeholder?: string; content?: string }
interface BlockType { type: string; name: string; settings: Setting[]; limit?: number }
interface Section { key: string; name: string; pages: string[]; settings: Setting[]; blocks: BlockType[]; max_blocks?: number }
interface Block { type: string; settings: Record<string, unknown> }
interface Values { settings: Record<string, unknown>; sections: Record<string, { settings: Record<string, unknown>; blocks: Block[] }> }
interface Theme { key: string; title: string; description: string; builtin: boolean; active: boolean; usable: boolean; problems: Json[]; settings: Setting[]; sections: Section[]; values: Values }

const PAGES: Array<[string, string]> = [['home', 'Home'], ['menu', 'Menu'], ['item', 'An item'], ['cart', 'Cart'], ['checkout', 'Checkout']]
const copy = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** A setting's value when nobody set one (a new block's fields): its default, else the empty value of its type. */
function emptyOf(s: Setting): unknown {
  if (s.default !== undefined) return s.default
  if (s.type === 'checkbox') return false
  if (s.type === 'range') return s.min ?? 0
  if (s.type === 'number') return 0
  if (s.type === 'select' || s.type === 'radio') return s.options?.[0]?.value ?? ''
  return ''
}

/** What differs from the saved values: the body of the preview and of `PUT …/theme` (settings merge key by key; blocks replace the list). */
function changes(saved: Values, draft: Values): { settings: Record<string, unknown>; sections: Record<string, Json> } {
  const diff = (a: Record<string, unknown>, b: Record<string, unknown>) => Object.fromEntries(Object.entries(b).filter(([k, x]) => !same(a[k], x)))
  const sections: Record<string, Json> = {}
  for (const [key, sec] of Object.entries(draft.sections)) {
    const was = saved.sections[key] ?? { settings: {}, blocks: [] }
    const settings = diff(was.settings, sec.settings)
    const blocks = same(was.blocks, sec.blocks) ? null : sec.blocks
    if (Object.keys(settings).length || blocks) sections[key] = { ...(Object.keys(settings).length ? { settings } : {}), ...(blocks ? { blocks } : {}) }
  }
  return { settings: diff(saved.settings, draft.settings), sections }
}

/** A field's value as the API takes it: numbers as numbers (what is not one is sent as typed, for the API to name). */
function valueOf(s: Setting, el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement): unknown {
  if (s.type === 'checkbox') return (el as HTMLInputElement).checked
  if (s.type === 'number' || s.type === 'range') return el.value.trim() !== '' && Number.isFinite(Number(el.value)) ? Number(el.value) : el.value
  return el.value
}

export async function websitePage(): Promise<void> {
  const detail = await api('GET', S()) as Json
  let themes: Theme[] = []
  let theme!: Theme
  let draft!: Values
  let page = 'home'
  let timer: ReturnType<typeof setTimeout> | undefined

  const frameName = 'theme-preview'
  const preview = h('iframe', { name: frameName, id: 'preview-frame', title: 'Preview of your website with these settings (not published)', sandbox: 'allow-popups allow-popups-to-escape-sandbox' })
  const previewValues = h('input', { type: 'hidden', name: 'values' })
  const previewTemplate = h('input', { type: 'hidden', name: 'template' })
  const previewPage = h('input', { type: 'hidden', name: 'page' })
  const previewForm = h('form', { method: 'post', action: `${SITE}/dashboard/stores/${theStore().id}/theme-preview`, target: frameName, id: 'preview-form', hidden: true },
    h('input', { type: 'hidden', name: 'csrf', value: CSRF }), previewTemplate, previewPage, previewValues)
  const pageSelect = h('select', { id: 'preview-page', name: 'preview_page' }, PAGES.map(([v, t]) => h('option', { value: v, text: t })))
  const state = h('p', { id: 'preview-state', class: 'muted', role: 'status', text: '' })
  pageSelect.addEventListener('change', () => { page = pageSelect.value; refresh(0) })

  const picker = h('fieldset', { id: 'theme-picker', class: 'themes' })
  const settingsForm = h('form', { id: 'theme-settings', class: 'card', novalidate: true, 'aria-label': 'Theme settings' })

  /** The messages of the API by their fields' paths; answers those no field of the form shows. */
  function showErrors(errors: Record<string, string | string[]>): string[] {
    const left: string[] = []
    for (const el of settingsForm.querySelectorAll<HTMLElement>('.field-error')) { el.textContent = ''; el.hidden = true }
    for (const el of settingsForm.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid')
    for (const [path, msgs] of Object.entries(errors)) {
      const text = ([] as string[]).concat(msgs).join(' ')
      const out = settingsForm.querySelector<HTMLElement>(`[data-error-for="${CSS.escape(path)}"]`)
      const field = settingsForm.querySelector(`[data-path="${CSS.escape(path)}"]`)
      if (out) { out.textContent = text; out.hidden = false } else left.push(`${path}: ${text}`)
      if (field) field.setAttribute('aria-invalid', 'true')
    }
    return left
  }

  let latest = 0
  /** Check the draft with the API, then have the browser post it into the frame; a refusal names the fields instead. */
  async function update(): Promise<void> {
    // What is checked is what is posted, and only the latest change is: an older answer arriving late changes nothing.
    const mine = ++latest
    const shown = theme
    const values = changes(shown.values, draft)
    const at = page
    try {
      await api('POST', `${S()}/theme/preview`, { template: shown.key, ...values, page: at })
    } catch (err) {
      const e = err as ApiFailure
      if (mine !== latest) return
      if (e.status !== 422) throw err
      const left = showErrors(e.body?.errors ?? {})
      state.textContent = ['The preview waits until the fields marked in the form are fixed.', ...left].join(' ')
      return
    }
    if (mine !== latest) return
    showErrors({})
    previewTemplate.value = shown.key
    previewPage.value = at
    previewValues.value = JSON.stringify(values)
    previewForm.requestSubmit()
    const changed = !same(values, { settings: {}, sections: {} })
    state.textContent = `Showing ${shown.title}${shown.active ? '' : ' (not on your website yet)'}${changed ? ' with unsaved changes' : ''}.`
  }
  const refresh = (delay = 400): void => {
    clearTimeout(timer)
    timer = setTimeout(() => { update().catch((err: unknown) => { state.textContent = (err as Error).message }) }, delay)
  }

  /** One generated field of a setting, at the path the API names it by (`sections.hero.settings.padding`). */
  function field(s: Setting, path: string, values: Record<string, unknown>): HTMLElement {
    if (s.type === 'header') return h('h3', { class: 'setting-header', text: s.content ?? '' })
    const id = `f-${path.replace(/[^a-z0-9_-]/gi, '-')}`
    const v = values[s.id!]
    const hint = s.info || (s.type === 'range' ? `${s.min}–${s.max}${s.unit ? ' ' + s.unit : ''}, steps of ${s.step}` : '') || (s.type === 'url' ? 'A path such as /menu, or a web address starting with https' : '')
    const described = [hint ? `${id}-hint` : '', `${id}-error`].filter(Boolean).join(' ')
    const after = [hint ? h('small', { id: `${id}-hint`, class: 'muted', text: hint }) : null,
      h('p', { id: `${id}-error`, class: 'field-error', role: 'alert', data: { errorFor: path }, hidden: true })]
    if (s.type === 'radio') {
      // One of the options as radio buttons, named together by the setting's label.
      return h('fieldset', { class: 'setting radio', id, data: { setting: path, path }, 'aria-describedby': described }, h('legend', { text: s.label ?? s.id }),
        (s.options ?? []).map((o) => h('label', { class: 'check' }, h('input', { type: 'radio', name: path, value: o.value, checked: o.value === v,
          on: { change: () => { values[s.id!] = o.value; refresh(0) } } }), o.label)), after)
    }
    const common = { id, name: path, data: { path }, 'aria-describedby': described }
    let input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement
    switch (s.type) {
      case 'textarea': input = h('textarea', { ...common, rows: 3, placeholder: s.placeholder }); input.value = String(v ?? ''); break
      case 'checkbox': input = h('input', { ...common, type: 'checkbox', checked: v === true }); break
      case 'select': input = h('select', common, (s.options ?? []).map((o) => h('option', { value: o.value, selected: o.value === v, text: o.label }))); break
      case 'color': input = h('input', { ...common, type: 'color', value: String(v ?? '#000000') }); break
      case 'number': input = h('input', { ...common, type: 'number', step: 'any', value: String(v ?? ''), placeholder: s.placeholder }); break
      case 'range': input = h('input', { ...common, type: 'number', min: s.min, max: s.max, step: s.step, value: String(v ?? '') }); break
      case 'url': input = h('input', { ...common, type: 'text', inputmode: 'url', value: String(v ?? '') }); break
      default: input = h('input', { ...common, type: 'text', value: String(v ?? ''), placeholder: s.placeholder })
    }
    const set = () => { values[s.id!] = valueOf(s, input); refresh(s.type === 'checkbox' || s.type === 'select' || s.type === 'radio' || s.type === 'color' ? 0 : 400) }
    input.addEventListener('input', set)
    input.addEventListener('change', set)
    const label = s.type === 'checkbox'
      ? h('label', { class: 'check', for: id }, input, s.label ?? s.id)
      : h('label', { for: id }, s.label ?? s.id, input)
    return h('div', { class: 'setting', data: { setting: path } }, label, after)
  }

  /** A section's fields: its settings, then its blocks (each removable) and a button per block type it may add. */
  function sectionPart(sec: Section): HTMLElement {
    const vals = draft.sections[sec.key] ??= { settings: {}, blocks: [] }
    const base = `sections.${sec.key}`
    const where = sec.pages.includes('*') ? 'every page' : sec.pages.map((p) => PAGES.find(([v]) => v === p)?.[1] ?? p).join(', ') || 'no page'
    const blocks = h('div', { class: 'blocks' })
    const drawBlocks = (): void => {
      blocks.replaceChildren(...vals.blocks.map((b, i) => {
        const bt = sec.blocks.find((t) => t.type === b.type)
        if (!bt) return h('p', { class: 'muted', text: `A block of type ${b.type}` })
        return h('fieldset', { class: 'block', data: { block: `${sec.key}.${i}` } }, h('legend', { text: `${bt.name} ${i + 1}` }),
          bt.settings.map((s) => field(s, `${base}.blocks.${i}.settings.${s.id ?? ''}`, b.settings)),
          h('button', { type: 'button', class: 'danger', on: { click: () => { vals.blocks.splice(i, 1); drawBlocks(); refresh(0) } }, text: `Remove ${bt.name.toLowerCase()} ${i + 1}` }))
      }), ...sec.blocks.map((bt) => {
        const full = (sec.max_blocks !== undefined && vals.blocks.length >= sec.max_blocks) || (bt.limit !== undefined && vals.blocks.filter((b) => b.type === bt.type).length >= bt.limit)
        return h('button', { type: 'button', disabled: full, on: { click: () => {
          vals.blocks.push({ type: bt.type, settings: Object.fromEntries(bt.settings.filter((s) => s.id).map((s) => [s.id!, emptyOf(s)])) })
          drawBlocks(); refresh(0)
        } }, text: `Add ${bt.name.toLowerCase()}` })
      }), h('p', { class: 'field-error', role: 'alert', data: { errorFor: `${base}.blocks` }, hidden: true }))
    }
    drawBlocks()
    const part = h('fieldset', { class: 'section', data: { section: sec.key } },
      h('legend', { text: sec.name }),
      h('p', { class: 'muted', text: `Shown on ${where}.` }),
      sec.settings.map((s) => field(s, `${base}.settings.${s.id ?? ''}`, vals.settings)),
      sec.blocks.length ? blocks : null,
      h('p', { class: 'field-error', role: 'alert', data: { errorFor: base }, hidden: true }))
    // Editing a section shows a page that draws it.
    part.addEventListener('focusin', () => {
      const on = sec.pages.find((p) => PAGES.some(([v]) => v === p))
      if (!sec.pages.includes('*') && !sec.pages.includes(page) && on) { page = on; pageSelect.value = on; refresh(0) }
    })
    return part
  }

  function drawForm(): void {
    settingsForm.replaceChildren(...[
      h('h2', { text: `Settings of ${theme.title}` }),
      theme.settings.length ? h('fieldset', { class: 'section', data: { section: '' } }, h('legend', { text: 'Theme' }), theme.settings.map((s) => field(s, `settings.${s.id ?? ''}`, draft.settings))) : null,
      theme.sections.map(sectionPart),
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'primary', id: 'theme-apply', text: theme.active ? 'Save and publish' : `Apply ${theme.title} to your website` }), ' ',
        h('button', { type: 'button', id: 'theme-discard', on: { click: () => { draft = copy(theme.values); drawForm(); refresh(0) } }, text: 'Discard changes' })),
    ].flat().filter((x): x is HTMLElement => x !== null))
  }

  function drawPicker(): void {
    picker.replaceChildren(h('legend', { text: 'Theme' }), ...themes.map((t) => h('label', { class: 'check theme-choice', data: { theme: t.key } },
      h('input', { type: 'radio', name: 'theme', value: t.key, checked: t.key === theme.key, disabled: !t.usable, on: { change: () => choose(t.key) } }),
      h('span', {}, h('strong', { text: t.title }), t.active ? h('span', { class: 'pill live', text: 'On your website' }) : null,
        h('span', { class: 'muted desc', text: t.usable ? t.description : `Cannot be used: ${t.problems.map((p: Json) => p.message).join('; ')}` })))))
  }

  function choose(key: string): void {
    // Values are kept per theme: unsaved ones of this theme would be lost by showing another.
    if (theme && theme.key !== key && !same(changes(theme.values, draft), { settings: {}, sections: {} }) && !confirm(`Leave your unsaved changes to ${theme.title}?`)) {
      drawPicker()
      return
    }
    theme = themes.find((t) => t.key === key)!
    draft = copy(theme.values)
    drawPicker()
    drawForm()
    refresh(0)
  }

  async function load(key?: string): Promise<void> {
    themes = ((await api('GET', `${S()}/themes`)) as { data: Theme[] }).data
    choose(key ?? (themes.find((t) => t.active) ?? themes[0]!).key)
  }

  settingsForm.addEventListener('submit', act(async () => {
    const body = { template: theme.key, ...changes(theme.values, draft) }
    try {
      await api('PUT', `${S()}/theme`, body)
    } catch (err) {
      showErrors((err as ApiFailure).body?.errors ?? {})
      throw err
    }
    const title = theme.title
    await load(theme.key)
    say(`${title} is on your website with these settings.`)
  }))

  view.replaceChildren(
    h('p', {}, 'Choose how your website looks and what its sections say. The preview shows your changes before anyone else sees them; ',
      h('a', { href: detail.url, target: '_blank', rel: 'noopener', id: 'website-link', text: 'open your website' }), ' to see what visitors see now.'),
    picker,
    h('div', { class: 'website-edit' },
      settingsForm,
      h('section', { class: 'preview card', 'aria-labelledby': 'preview-title' },
        h('h2', { id: 'preview-title', text: 'Preview' }),
        h('label', {}, 'Page', pageSelect), state, preview, previewForm)))
  await load()
}
