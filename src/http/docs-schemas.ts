/** Moved to src/ops/docs-schemas.ts (operations layer); this re-export goes once every importer has moved. */
export * from '../ops/docs-schemas.ts'
