/** Kong as spec.helpers starts it, in process (stub until the router lands). */
import type { LuaRuntime } from './pdk.js'

export class InProcessKong {
  constructor(
    readonly runtime: LuaRuntime,
    readonly root: string,
  ) {}

  async handle(op: string, _payload: unknown): Promise<unknown> {
    throw new Error(`spec.helpers: ${op} is not emulated`)
  }
}
