/** The driver, delivery and driver-app operations, in one list for `ALL_OPS` (src/ops/index.ts). */
import type { Op } from '../op.ts'
import { driverOps } from './drivers.ts'
import { deliveryOps } from './deliveries.ts'
import { driverAppOps } from './driver-app.ts'
import { driverAccountOps } from './driver-account.ts'

export const deliveryFamilyOps: readonly Op[] = [...driverOps, ...deliveryOps, ...driverAppOps, ...driverAccountOps]
