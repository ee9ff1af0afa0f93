/** Moved to src/ops/menu-payloads.ts (operations layer); this re-export goes once every importer has moved. */
export * from '../ops/menu-payloads.ts'
