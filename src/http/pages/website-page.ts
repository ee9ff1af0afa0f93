/**
 * A page of a store's website (issue 15 item 2; docs/website.md), drawn: what the page shows comes
 * from the website's operations (src/ops/web/website.ts `websiteContext`), the drawing from the
 * store's theme (src/themes/store-site.ts). A theme that fails while rendering falls back to the
 * default theme — the page still works — and the owner is shown why (issue 15 item 1).
 */
import type { Services } from '../../services.ts'
import type { StoreRow } from '../../storage/stores.ts'
import { drawPage, reportRenderProblems, storeThemeFor } from '../../themes/store-site.ts'
import { websiteContext, type PageInput, type Visitor } from '../../ops/web/website.ts'

export async function renderWebsitePage(svc: Services, store: StoreRow, visitor: Visitor, page: PageInput): Promise<string> {
  const theme = storeThemeFor(svc, store)
  const context = websiteContext(svc, store, visitor, page)
  const r = await drawPage(svc, theme, {
    template: page.template, context, sections: theme.sections, settings: theme.settings,
    ...(page.content !== undefined ? { content: page.content } : {}),
  })
  if (!r.ok) reportRenderProblems(svc, store.id, r.problems)
  return r.html
}
