/** Moved to src/ops/schemas.ts (operations layer); this re-export goes once every importer has moved. */
export * from '../ops/schemas.ts'
