/** What every host module shares: the request state and the shape of one operation (index.ts gathers the operations). */
import type { Context } from '../../kit/context.js'
import type { KitBridge } from '../bridge.js'
import type { Clock } from '../../kit/private/clock.js'

/** An operation: the request state (undefined outside a request), then Lua's arguments. */
export type HostOp = (state: HostState, ...args: unknown[]) => unknown[]

export interface HostState {
  ctx: Context | undefined
  bridge: KitBridge
  /** The `__host` function Lua calls. */
  call: (...args: unknown[]) => unknown[]
  /** The first resty.http call no `outbound` entry answered (it fails the fixture). */
  unmatched?: string
  /** The clock outside a request (a request reads its context's). */
  clock: Clock
  /** Where relative file paths start (the fixture's folder). */
  baseDir?: string
  /** Lua may change the host's files (`broker pdk test`: a spec and its Kong write as under busted); a replay may not. */
  writesFiles?: boolean
  /** A new request begins. */
  begin(ctx: Context): void
}
