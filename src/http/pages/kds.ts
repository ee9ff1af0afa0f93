/** The kitchen screen page (`{site_url}/kds`, docs/kds.md "Kitchen screen"): one self-contained HTML file, read once. */
import { readFileSync } from 'node:fs'

export const KDS_PAGE: string = readFileSync(new URL('./kds.html', import.meta.url), 'utf8')
