/** Moved to src/ops/delivery-schemas.ts (operations layer); this re-export goes once every importer has moved. */
export * from '../ops/delivery-schemas.ts'
