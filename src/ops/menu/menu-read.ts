/**
 * Menu reads that are not the whole menu (api-v1 §4.2, §4.11 `list_categories`): the categories
 * with how many items each holds, so an agent can pick a `category_id` or see which one is empty
 * (only an empty category can be deleted).
 */
import { defineOp } from '../op.ts'
import { storeOf } from '../scope.ts'
import { CategorySchema } from './menu.ts'
import { listCategories as categoryRows } from '../../storage/menu-categories.ts'

export const listCategories = defineOp({
  id: 'menu.categories.list', tag: 'Menu', summary: 'List the menu categories with their item counts',
  description: 'In display order (`position`, then id); `item_count` counts every item, sold-out included.',
  access: { owner: 'menu:read' }, scope: ['store'],
  output: {
    type: 'array',
    items: { ...CategorySchema, required: [...CategorySchema.required, 'item_count'], properties: { ...CategorySchema.properties, item_count: { type: 'integer' } } },
  },
  run: (ctx) => categoryRows(ctx.svc.db, storeOf(ctx).id),
})

export const menuReadOps = [listCategories]
