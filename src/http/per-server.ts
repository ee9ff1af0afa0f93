/** Moved to src/per-server.ts so operations (src/ops) can use it too; kept for the existing importers. */
export { perServer } from '../per-server.ts'
