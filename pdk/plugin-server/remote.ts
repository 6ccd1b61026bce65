/** One module plugin of a scenario on a plugin server, driven as Kong 3.x's mp_rpc.lua drives it. */
import type { Context } from '../kit/context.js'
import type { KitTree } from '../kit/index.js'
import type { Recorder } from '../kit/private/trace.js'
import { serveCall } from '../external/bridge.js'
import type { ServedPlugin, ServerProcess } from './process.js'
import { rpcLog, serverLine } from '../external/log.js'
import { STEP_METHOD } from '../external/lua-values.js'
import { RpcError, RpcTimeout } from './rpc.js'

/** Where a remote plugin finds its server: the run's plugin servers. */
export interface ServerSource {
  readonly options: { readonly timeoutMs: number }
  server(plugin: ServedPlugin): Promise<ServerProcess>
}

/** One plugin of a scenario on its server: an instance started with the config Kong sends. */
export class RemotePlugin {
  private iid: number | undefined
  private ctx: Context | undefined

  constructor(
    private readonly servers: ServerSource,
    private readonly plugin: ServedPlugin,
    private readonly config: string,
  ) {}

  get name(): string {
    return this.plugin.name
  }

  private get timeout(): number {
    return this.servers.options.timeoutMs
  }

  private async call(method: string, args: unknown[]): Promise<unknown> {
    const process = await this.servers.server(this.plugin)
    // the server's output goes to the log of the scenario running it, as Kong's grab_logs does
    const ctx = this.ctx
    process.onLine = ctx ? (line) => ctx.logs.push(serverLine(this.name, process.pid, line)) : undefined
    return (await process.connection(this.timeout)).call(method, args, this.timeout)
  }

  /** Kong's get_instance_id: StartInstance with the JSON config. */
  async start(): Promise<void> {
    const status = (await this.call('plugin.StartInstance', [{ Name: this.name, Config: this.config }])) as {
      Id: number
    }
    this.iid = status.Id
  }

  /**
   * Kong's bridge_loop for one phase: each call the plugin makes is served from the kit and
   * answered with its Step method. Returns the server's complaint when the plugin threw;
   * throws Kong's error when a call raised (the plugin is then never answered).
   */
  async handle(phase: string, kit: KitTree, ctx: Context, record: Recorder | undefined): Promise<string | undefined> {
    const process = await this.servers.server(this.plugin)
    const logged = process.log.length
    this.ctx = ctx
    let step: { Data?: unknown; EventId?: number }
    try {
      step = await this.event(phase, ctx, true)
      while (step.Data !== 'ret') {
        const { Method, Args } = (step.Data ?? {}) as { Method?: string; Args?: unknown[] }
        const method = String(Method)
        const served = await serveCall(kit, ctx, method, Array.isArray(Args) ? Args : [], record)
        if (served.kind === 'raised') throw new KitRaised(served.message)
        // Kong ends the request: the plugin's event is abandoned, as Kong's coroutine never resumes
        if (served.kind === 'exit') return undefined
        const data =
          served.value === undefined ? { EventId: step.EventId } : { EventId: step.EventId, Data: served.value }
        const stepMethod = Object.hasOwn(STEP_METHOD, method) ? STEP_METHOD[method]! : 'plugin.Step'
        step = (await this.call(stepMethod, [data])) as typeof step
      }
    } catch (e) {
      if (e instanceof KitRaised) throw e
      // handle_event logs what went wrong on the wire and lets the request go on
      rpcLog(ctx, 'err', e instanceof RpcTimeout ? `no data (${e.message})` : (e as Error).message)
      return undefined
    }
    // the server prints a thrown exception before it answers "ret"; let its output arrive
    await new Promise((r) => setImmediate(r))
    const mark = `unhandled exception in ${this.name}.${phase} on instance #${this.iid}`
    return process.log.slice(logged).find((l) => l.includes(mark))
  }

  private async event(phase: string, ctx: Context, retry: boolean): Promise<{ Data?: unknown; EventId?: number }> {
    try {
      if (this.iid === undefined) await this.start()
      return (await this.call('plugin.HandleEvent', [{ InstanceId: this.iid, EventName: phase }])) as {
        Data?: unknown
        EventId?: number
      }
    } catch (e) {
      // the server lost the instance (restarted, expired): Kong starts it again and retries
      if (retry && e instanceof RpcError && /no plugin instance/i.test(e.message)) {
        rpcLog(ctx, 'warn', e.message)
        this.iid = undefined
        return this.event(phase, ctx, false)
      }
      if (retry && !(e instanceof RpcError) && !(e instanceof RpcTimeout)) {
        // the connection or the process died: the next call reconnects or restarts it
        this.iid = undefined
        return this.event(phase, ctx, false)
      }
      throw e
    }
  }

  /** CloseInstance; errors are ignored, as Kong ignores them. */
  async close(): Promise<void> {
    if (this.iid === undefined) return
    const iid = this.iid
    this.iid = undefined
    await this.call('plugin.CloseInstance', [iid]).catch(() => undefined)
  }
}

/** A PDK call raised in Kong: the phase fails with this message. */
export class KitRaised extends Error {}
