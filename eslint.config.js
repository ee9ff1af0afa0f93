// Lint holds the habits memory does not (STYLE habits 5, 6, 13): no floating promises, no promise
// where a callback is expected, and the layer rules (front doors → ops → actors/storage/domain).
import tseslint from 'typescript-eslint'

const FRONT_DOORS = ['http', 'ws', 'mcp']
/** A front door may not import another front door (ARCHITECTURE "The shape"). */
/** A page module (src/http/pages): imported only by the routes that serve it and by other pages. */
const PAGES = { regex: '(^|/)pages/', message: 'Nothing imports a page module but the routes that serve it (src/http/routes) and other pages.' }
const otherFrontDoors = (self) =>
  FRONT_DOORS.filter((d) => d !== self).flatMap((d) => [`../${d}/*`, `../../${d}/*`, `../../../${d}/*`, `**/src/${d}/*`])

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'bench/results/**', '.tap/**', '.scratch/**', 'examples/client/api.d.ts'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // tap runs and awaits the subtests it is handed (`t.test(...)`, `t.before(...)`): not floating.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafePromises: [{ from: 'package', package: '@tapjs/core', name: 'PromiseWithSubtest' }] }],
    },
  },
  {
    // Pages are leaves (issue 33 item 3): only the routes that serve them, and other pages, import a page module.
    files: ['src/**/*.ts'],
    ignores: ['src/http/routes/**', 'src/http/pages/**', 'src/browser/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [PAGES] }] },
  },
  ...FRONT_DOORS.map((door) => ({
    files: [`src/${door}/**/*.ts`],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: otherFrontDoors(door), message: 'A front door binds to operations (src/ops); it never imports another front door.' }, PAGES] }],
      // Reads and writes go through the operations; the shapes they answer may be named (types vanish in the build).
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ regex: '^(\\.\\./)+(storage|actors)/', allowTypeImports: true, message: 'A front door reads and writes through src/ops, never src/storage or src/actors (`import type` of their shapes is fine).' }] }],
    },
  })),
  {
    // The routes serve the pages: the same rules, pages allowed.
    files: ['src/http/routes/**/*.ts', 'src/http/pages/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: otherFrontDoors('http'), message: 'A front door binds to operations (src/ops); it never imports another front door.' }] }] },
  },
  {
    // Browser code (src/browser/, issue 33 item 4) runs in the page: from the server and from packages
    // it takes types only (they vanish in the build), and node's globals do not exist there.
    files: ['src/browser/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ regex: '^(?!\\./[\\w-]+\\.js$)', allowTypeImports: true, message: 'Browser code imports only its own modules (./x.js); from the server and packages, `import type` only.' }] }],
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'require', 'module', '__dirname', '__filename', 'global', 'setImmediate'],
    },
  },
  {
    // Operations, actors, storage and the pure domain sit below every front door.
    files: ['src/ops/**/*.ts', 'src/actors/**/*.ts', 'src/storage/**/*.ts', 'src/domain/**/*.ts', 'src/auth/**/*.ts', 'src/net/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['../http/*', '../ws/*', '../mcp/*', '../../http/*', '../../ws/*', '../../mcp/*'], message: 'Layers point down: this module may not import a front door.' }] }],
    },
  },
)
