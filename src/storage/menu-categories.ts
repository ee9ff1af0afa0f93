/** A store's menu categories with their item counts, in display order (owner list, admin MCP `list_categories`). */
import { stmt, type Db } from './db.ts'

export interface CategoryListRow { id: number; name: string; position: number; station: string | null; item_count: number; created_at: string }

export const listCategories = (db: Db, storeId: number): CategoryListRow[] =>
  stmt<[number], CategoryListRow>(
    db,
    `SELECT c.id, c.name, c.position, c.station, c.created_at, COUNT(i.id) AS item_count
       FROM menu_categories c LEFT JOIN menu_items i ON i.category_id = c.id
      WHERE c.store_id = ? GROUP BY c.id ORDER BY c.position, c.id`,
  ).all(storeId)
