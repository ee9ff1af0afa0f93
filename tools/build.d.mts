/** Types of tools/build.mjs (plain JavaScript so that it runs before anything is compiled). */
export declare const DEFAULT_OUT: string
/** True when `out` holds a build of the current sources (stamp newer than every input, same file list). */
export declare function upToDate(out?: string, files?: string[]): boolean
/** Compile src/ into `out` (a folder directly in the project root) unless `ifStale` and up to date; true when it built. */
export declare function buildDist(opts?: { out?: string; ifStale?: boolean; quiet?: boolean }): Promise<boolean>
export declare function rewriteImports(code: string): string
/** The browser code's folder, src/browser/. */
export declare const BROWSER_DIR: string
/** The browser code compiled for the browser, keyed by its path under src/browser/ with `.js` (`dashboard/app.js`, `kds.js`). */
export declare function browserCode(files?: string[]): Promise<Record<string, string>>
