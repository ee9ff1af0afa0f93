/**
 * Headless Chromium for page tests: Debian's `chromium` driven by playwright-core (never a
 * downloaded browser; DEPENDENCIES.md "browser tests"). `null` when it is not installed.
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

export async function launchChromium(): Promise<Browser | null> {
  if (!existsSync(CHROMIUM)) return null
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}
