/** A store's website theme, owner side (docs/themes.md "Choosing and customising a store's theme"): bindings of src/ops/web/store-theme.ts. */
import { bind } from '../bind.ts'
import * as theme from '../../ops/web/store-theme.ts'
import * as editor from '../../ops/web/theme-preview.ts'
import { themeFilesFromZip } from '../../themes/zip.ts'

const store = { store: 'id' } as const

export const storeThemeRoutes = [
  bind(theme.getStoreTheme, { method: 'GET', path: '/restaurants/{id}/theme', auth: 'owner', ids: store }),
  bind(theme.updateStoreTheme, { method: 'PUT', path: '/restaurants/{id}/theme', auth: 'owner', ids: store }),
  // The dashboard's website editor (issue 34 item 12): the themes with their schemas, and a preview of unsaved values.
  bind(editor.listStoreThemes, { method: 'GET', path: '/restaurants/{id}/themes', auth: 'owner', ids: store }),
  bind(editor.previewStoreTheme, { method: 'POST', path: '/restaurants/{id}/theme/preview', auth: 'owner', ids: store }),
  // The theme as JSON `{files}`, or as a zip archive (Content-Type: application/zip) of the same files.
  bind(theme.uploadCustomTheme, {
    method: 'PUT', path: '/restaurants/{id}/theme/custom', auth: 'owner', ids: store,
    decoders: { 'application/zip': (body) => ({ files: themeFilesFromZip(body) }) },
  }),
  bind(theme.deleteCustomTheme, { method: 'DELETE', path: '/restaurants/{id}/theme/custom', auth: 'owner', ids: store }),
]
