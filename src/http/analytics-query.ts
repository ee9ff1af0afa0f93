/** Moved to src/ops/analytics-query.ts (operations layer); this re-export goes once every importer has moved. */
export * from '../ops/analytics-query.ts'
