/** Everything a front door needs, built once per server (app.ts) and handed to routes. */
import type { Config } from './config.ts'
import type { Db } from './storage/db.ts'
import type { Committer } from './storage/commit.ts'
import type { Logger } from './log.ts'
import type { EventRouter } from './actors/event-router.ts'
import type { StoreQueries } from './storage/stores.ts'
import type { OrderQueries } from './storage/orders.ts'
import type { Registry } from './actors/system.ts'
import type { StoreMsg, StoreState } from './actors/store.ts'
import type { OrderMsg, OrderState } from './actors/order.ts'
import type { AuthFamily, Authenticator } from './auth/principals.ts'

export interface Services {
  config: Config
  db: Db
  committer: Committer
  log: Logger
  events: EventRouter
  stores: StoreQueries
  orders: OrderQueries
  /** Authenticators by family, shared by every front door. */
  auth: { [A in AuthFamily]: Authenticator<A> }
  actors: {
    stores: Registry<number, StoreState | null, StoreMsg>
    orders: Registry<number, OrderState | null, OrderMsg>
  }
}
