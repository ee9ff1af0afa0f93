/**
 * An uploaded image as an operation's input: base64 or a data URL in JSON (or the raw body, which
 * the binding's decoder turns into the same), checked for size (413) and for its real type, read
 * from its bytes (415). Shared by the proof-of-delivery photo and the menu item photo.
 */
import { ApiError } from '../../errors.ts'
import { POD_PHOTO_TYPES, sniffImageType } from '../../domain/delivery.ts'

/** Decode a base64 (or data-URL) image of at most `maxBytes` and check its real type (413, 415, 422). */
export function decodePhoto(input: { image: string; content_type?: string }, maxBytes: number): { bytes: Buffer; type: string } {
  const tooLarge = () => new ApiError('payload_too_large', `The photo must be at most ${maxBytes} bytes.`, undefined, undefined, { max_bytes: maxBytes })
  const m = /^data:([\w/+.-]+);base64,(.*)$/s.exec(input.image)
  const declared = input.content_type ?? m?.[1]
  const b64 = (m ? m[2]! : input.image).replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(b64)) throw new ApiError('validation_failed', undefined, { image: ['Send the image as base64.'] })
  if (b64.length * 0.75 > maxBytes + 3) throw tooLarge()
  const bytes = Buffer.from(b64, 'base64')
  if (bytes.length > maxBytes) throw tooLarge()
  const type = sniffImageType(bytes)
  if (!type || (declared && declared.toLowerCase() !== type && !(declared === 'image/jpg' && type === 'image/jpeg'))) {
    throw new ApiError('unsupported_media_type', `Send a ${POD_PHOTO_TYPES.join(', ')} image.`)
  }
  return { bytes, type }
}

/** Body decoders for a route that also takes the image itself as the body (`Content-Type: image/jpeg`, …). */
export const rawImageDecoders = Object.fromEntries(POD_PHOTO_TYPES.map((type) => [type, (body: Buffer) => ({ image: body.toString('base64'), content_type: type })]))
