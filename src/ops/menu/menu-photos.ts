/**
 * Menu item photos and the menu's display order (issue 34 item 10; docs/menu-photos.md). A photo
 * is uploaded once, re-encoded by the server (resized to at most 1200 px and a 400 px thumbnail,
 * metadata stripped, JPEG) and kept with the store actor's menu write, so it is durable before the
 * answer and the item never names a photo that is not there. It is served from its content hash
 * (`/media/items/{key}.jpg`): a new photo is a new address, and each address is cached for good.
 */
import { createHash } from 'node:crypto'
import sharp from 'sharp'
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id } from '../schemas/common.ts'
import { ItemSchema, MenuSchema } from '../schemas/named.ts'
import { itemOut, runMenuOp } from './menu-payloads.ts'
import { decodePhoto } from '../schemas/image-upload.ts'
import { ApiError, notFound } from '../../errors.ts'
import { menuView } from '../../storage/stores.ts'
import { photoBytes, type PhotoRenditions } from '../../storage/menu-photos.ts'
import { verticalOf } from '../../domain/verticals.ts'
import type { Config } from '../../config.ts'
import type { Services } from '../../services.ts'
import { concurrencyLimit } from '../../domain/concurrency.ts'

const tag = 'Menu'
const write = { owner: 'menu:write', staff: 'menu_edit' } as const

export const PHOTO_LONG_SIDE = 1200
export const THUMB_LONG_SIDE = 400
/** Decoded pixels an upload may have (a small file can still decode to a huge image). */
export const PHOTO_MAX_PIXELS = 40_000_000

/** The body limit of the upload route: the photo itself, or the photo as base64 in JSON. */
export const photoBodyLimit = (c: Pick<Config, 'photoMaxBytes'>): number => Math.ceil((c.photoMaxBytes * 4) / 3) + 4096

const unreadable = (why: string) => new ApiError('validation_failed', undefined, { image: [why] })

/**
 * The server's renditions of an upload: turned upright by its EXIF orientation, fitted inside
 * 1200×1200 and 400×400 (never enlarged), flattened on white, JPEG without any of the original's
 * metadata (location, camera). A file that does not decode as an image is 422.
 */
export function preparePhoto(bytes: Buffer): Promise<PhotoRenditions> {
  return decoding(() => renditions(bytes))
}

/**
 * Photos decoded at once, server-wide: a large image takes up to ~4 bytes per pixel while it is
 * decoded (160 MB at the 40-megapixel limit), so uploads arriving together wait their turn.
 */
export const PHOTO_DECODES_AT_ONCE = 2
const decoding = concurrencyLimit(PHOTO_DECODES_AT_ONCE)

async function renditions(bytes: Buffer): Promise<PhotoRenditions> {
  // The upload is decoded once; the thumbnail is made from the (small) full rendition.
  const render = (input: Buffer, side: number) =>
    sharp(input, { limitInputPixels: PHOTO_MAX_PIXELS, failOn: 'error' })
      .rotate()
      .resize(side, side, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 82, mozjpeg: true })
      .toBuffer({ resolveWithObject: true })
  try {
    const full = await render(bytes, PHOTO_LONG_SIDE)
    const thumb = await render(full.data, THUMB_LONG_SIDE)
    return {
      key: createHash('sha256').update(full.data).digest('hex').slice(0, 32),
      type: 'image/jpeg',
      width: full.info.width,
      height: full.info.height,
      full: full.data,
      thumbWidth: thumb.info.width,
      thumbHeight: thumb.info.height,
      thumb: thumb.data,
    }
  } catch (err) {
    const msg = err instanceof Error ? err.message : ''
    if (/pixel limit/i.test(msg)) throw unreadable(`The image has more than ${PHOTO_MAX_PIXELS / 1_000_000} million pixels.`)
    throw unreadable('The file could not be read as an image.')
  }
}

const itemId = { item_id: Id }
export const PhotoBody = v.object({
  /**
   * Base64 or a data URL; the route also takes the image itself as the body. Required, but checked
   * in `run` after the item: an item that is not the store's is 404 whatever the body (api-v1 §1).
   */
  image: v.optional(v.string()),
  content_type: v.optional(v.picklist(['image/jpeg', 'image/jpg', 'image/png', 'image/webp'])),
})

export const setItemPhoto = defineOp({
  id: 'menu.items.photo.set', tag, summary: 'Upload the item\'s photo', access: write, scope: ['store'],
  description: 'The body is the image itself (`Content-Type: image/jpeg`, `image/png` or `image/webp`), or JSON ' +
    '`{"image": base64 or data URL}`. At most `PHOTO_MAX_BYTES` (8 MiB by default) as uploaded: 413 above; 415 for another type ' +
    '(read from the bytes); 422 when it does not decode or has more than 40 million pixels. The server keeps a JPEG of at most ' +
    `${PHOTO_LONG_SIDE} px and a ${THUMB_LONG_SIDE} px thumbnail without the original's metadata; a new photo replaces the old one ` +
    'and gets a new address (`photo.url`, also `images[0]`).',
  input: v.object({ ...itemId, ...PhotoBody.entries }), output: ItemSchema,
  run: async (ctx, { item_id, ...body }) => {
    const store = storeOf(ctx)
    if (!ctx.svc.stores.item(store.id, item_id)) throw notFound('item') // before the body, and the work of resizing
    if (!body.image) throw new ApiError('validation_failed', undefined, { image: ['Send the photo: the image itself as the body, or `image` as base64.'] })
    const { bytes } = decodePhoto({ image: body.image, content_type: body.content_type }, ctx.svc.config.photoMaxBytes)
    const photo = await preparePhoto(bytes)
    await runMenuOp(ctx.svc, store.id, { op: 'item.photo', id: item_id, photo })
    return itemOut(ctx.svc, store, item_id)
  },
})

export const deleteItemPhoto = defineOp({
  id: 'menu.items.photo.delete', tag, summary: 'Remove the item\'s photo', access: write, scope: ['store'],
  description: 'The item shows no uploaded photo (its `images` set by address stay). Its old addresses answer 404 once no item uses the photo.',
  input: v.object(itemId), output: ItemSchema,
  run: async (ctx, { item_id }) => {
    const store = storeOf(ctx)
    await runMenuOp(ctx.svc, store.id, { op: 'item.photo', id: item_id, photo: null })
    return itemOut(ctx.svc, store, item_id)
  },
})

const Ids = v.pipe(v.array(Id), v.minLength(1), v.maxLength(5000))

export const reorderCategories = defineOp({
  id: 'menu.categories.reorder', tag, summary: 'Set the order of the categories', access: write, scope: ['store'],
  description: '`ids`: every category of the store once, in the order to show them (422 otherwise, nothing changed). Answers the menu.',
  input: v.object({ ids: Ids }), output: MenuSchema,
  run: async (ctx, { ids }) => {
    const store = storeOf(ctx)
    await runMenuOp(ctx.svc, store.id, { op: 'category.reorder', ids })
    return fullMenu(ctx.svc, store.id, store.store_type)
  },
})

export const reorderItems = defineOp({
  id: 'menu.items.reorder', tag, summary: 'Set the order of a category\'s items', access: write, scope: ['store'],
  description: '`ids`: every item of the category once, in the order to show them (422 otherwise, nothing changed). Answers the menu.',
  // `ids` is required, checked after the category: another store's category is 404 whatever the body.
  input: v.object({ category_id: Id, ids: v.optional(Ids) }), output: MenuSchema,
  run: async (ctx, { category_id, ids }) => {
    const store = storeOf(ctx)
    if (!ctx.svc.stores.category(store.id, category_id)) throw notFound('category')
    if (!ids) throw new ApiError('validation_failed', undefined, { ids: ['List every item of the category once, in the order to show them.'] })
    await runMenuOp(ctx.svc, store.id, { op: 'item.reorder', categoryId: category_id, ids })
    return fullMenu(ctx.svc, store.id, store.store_type)
  },
})

const fullMenu = (svc: Services, storeId: number, storeType: string) => menuView(svc.stores.menu(storeId), verticalOf(storeType), true, svc.config.siteUrl)

/** A rendition to serve (`/media/items/{key}.jpg`, `{key}-thumb.jpg`), or 404. */
export function mediaPhoto(svc: Services, name: string): { type: string; bytes: Buffer } {
  const m = /^([0-9a-f]{32})(-thumb)?\.jpg$/.exec(name)
  const found = m ? photoBytes(svc.db, m[1]!, m[2] ? 'thumb' : 'full') : undefined
  if (!found) throw notFound('photo')
  return found
}

export const menuPhotoOps = [setItemPhoto, deleteItemPhoto, reorderCategories, reorderItems]
