/**
 * The Lua face's door into the kit: `__kit(id, ...)` calls the kit function a dotted path names,
 * on the kit of the scenario running now, records it in the trace, and answers with a status
 * first (1 values, 2 the phase ended, 3 a promise JS must await, 0 an error message), which
 * broker/kong.lua turns into Lua's return values, a yield or `error(msg, 2)`.
 */
import type { Context } from '../kit/context.js'
import { KIT_MODULES, type KitFunction, type KitTree } from '../kit/index.js'
import { errorMessage, type Recorder } from '../kit/private/trace.js'
import { toList, Values } from '../kit/private/values.js'

/** What a kit call resolved to, kept until JS has awaited it. */
export interface Pending {
  promise: Promise<unknown>
  path: string
  args: unknown[]
}

// paths are the same for every kit: ids are process-wide
const ids = new Map<string, number>()
const paths: string[] = []

const segments: string[][] = []

/** The kit node a dotted path reaches, or undefined. */
function reach(kit: KitTree, path: string, segs: string[] = path.split('.')): KitFunction | KitTree | undefined {
  let node: KitFunction | KitTree | undefined = kit
  for (const seg of segs) {
    if (node === undefined || typeof node === 'function') return undefined
    node = Object.hasOwn(node, seg) || (node === kit && KIT_MODULES.has(seg)) ? node[seg] : undefined
  }
  return node
}

export class KitBridge {
  kit: KitTree | undefined
  ctx: Context | undefined
  record: Recorder | undefined
  pending: Pending | undefined
  private fns: Array<KitFunction | undefined> = []
  private readonly logIds = new Set<number>()
  // the name the trace gives the call running now, when it is not its kit path (ngx.req.set_header)
  private shownAs: string | undefined

  constructor(private readonly probe: KitTree) {}

  /** The scenario whose kit Lua calls from now on. */
  use(kit: KitTree, ctx: Context, record: Recorder | undefined): void {
    if (kit !== this.kit) this.fns = []
    this.kit = kit
    this.ctx = ctx
    this.record = record
  }

  /** No scenario any more: kit calls fail until the next `use`. */
  leave(): void {
    this.kit = this.ctx = this.record = undefined
    this.fns = []
  }

  /** `__kit_id(path)`: an id and "function" or "module", or nothing for a name the kit lacks. */
  readonly id = (path: unknown): unknown[] => {
    if (typeof path !== 'string') return []
    const node = reach(this.kit ?? this.probe, path)
    if (node === undefined || node === null) return []
    const kind = typeof node === 'function' ? 'function' : typeof node === 'object' ? 'module' : undefined
    if (!kind) return []
    let id = ids.get(path)
    if (id === undefined) {
      ids.set(path, (id = paths.length))
      paths.push(path)
      segments.push(path.split('.'))
    }
    if (path.startsWith('log.')) this.logIds.add(id)
    return [id, kind]
  }

  /** `__kit_as(name, id, ...)`: a kit call the trace shows as `name` (an ngx.* write through the kit). */
  readonly callAs = (name: unknown, ...input: unknown[]): unknown[] => {
    this.shownAs = String(name)
    try {
      return this.call(...input)
    } finally {
      this.shownAs = undefined
    }
  }

  /** `__kit(id, ...)`: one kit call (log calls carry the Lua file:line first). */
  readonly call = (...input: unknown[]): unknown[] => {
    const id = input[0] as number
    const path = paths[id]!
    const shown = this.shownAs ?? path
    const ctx = this.ctx
    if (!ctx || !this.kit) return [0, `kong.${path} called outside a request`]
    let fn = this.fns[id]
    if (fn === undefined) {
      const node = reach(this.kit, path, segments[id])
      if (typeof node !== 'function') return [0, `attempt to call a nil value (field '${path.split('.').pop()}')`]
      this.fns[id] = fn = node
    }
    const isLog = this.logIds.has(id)
    const args = input.slice(isLog ? 2 : 1)
    if (isLog) ctx.site = input[1] as string
    const ended = ctx.phaseEnded
    let result: unknown
    try {
      result = (fn as (...a: unknown[]) => unknown)(...args)
    } catch (e) {
      const message = errorMessage(e)
      this.record?.({ call: shown, args, throws: message })
      return [0, message]
    } finally {
      if (isLog) ctx.site = undefined
    }
    if (result instanceof Promise) {
      this.pending = { promise: result, path: shown, args }
      return [3]
    }
    return this.answer(shown, args, result, ended)
  }

  /** The status and values Lua gets for a kit result. */
  answer(path: string, args: unknown[], result: unknown, ended = false): unknown[] {
    this.record?.({ call: path, args, returns: toList(result) })
    if (!ended && this.ctx?.phaseEnded) return [2]
    if (result instanceof Values) return [1, ...result.list]
    // A kit function that answers nothing gives one nil, as Kong's PDK functions `return nil` (tonumber(x) needs one).
    return [1, result]
  }

  /** Awaits the pending call; what Lua is resumed with. */
  async settle(): Promise<unknown[]> {
    const p = this.pending!
    this.pending = undefined
    try {
      return this.answer(p.path, p.args, await p.promise)
    } catch (e) {
      const message = errorMessage(e)
      this.record?.({ call: p.path, args: p.args, throws: message })
      return [0, message]
    }
  }
}
