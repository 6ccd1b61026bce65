/** Log lines about plugin servers, as Kong writes them to its error log. */
import type { Context, LogEntry } from '../kit/context.js'
import { formatLine } from '../kit/log/line.js'

const pad = (n: number) => String(n).padStart(2, '0')

/** A line the server printed, as Kong's `grab_logs` passes it on: at info, prefixed `[name:pid]`. */
export function serverLine(name: string, pid: number, text: string): LogEntry {
  const d = new Date()
  const stamp = `${d.getFullYear()}/${pad(d.getMonth() + 1)}/${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  return { level: 'info', line: `${stamp} [info] ${process.pid}#0: [${name}:${pid}] ${text}` }
}

/** What the kong-js-pluginserver prints when a plugin's phase throws (server.js HandleEvent). */
export const unhandledText = (name: string, phase: string, iid: number, e: unknown): string =>
  `[WARN] unhandled exception in ${name}.${phase} on instance #${iid}: ${String(e)}`

/** Kong's own line from `Rpc:handle_event` (mp_rpc.lua), in the plugin's namespace. */
export function rpcLog(ctx: Context, level: 'err' | 'warn', message: string): void {
  const label = level === 'err' ? 'error' : 'warn'
  const site = level === 'err' ? 'mp_rpc.lua:318' : 'mp_rpc.lua:314'
  ctx.logs.push({ level: label, line: formatLine(ctx, label, message, site, ctx.plugin?.name) })
}
