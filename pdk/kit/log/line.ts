/** The error-log line format and message stringification of pdk.log. */
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Context } from '../context.js'
import { luaString } from '../private/values.js'

/** nginx labels per kit level; `err` prints as `error`. */
export const LABELS: Record<string, string> = {
  debug: 'debug',
  info: 'info',
  notice: 'notice',
  warn: 'warn',
  err: 'error',
  crit: 'crit',
  alert: 'alert',
  emerg: 'emerg',
}

const pad = (n: number) => String(n).padStart(2, '0')

function timestamp(d: Date): string {
  return `${d.getFullYear()}/${pad(d.getMonth() + 1)}/${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
}

/**
 * Lua's tostring for a log argument, as Kong's log functions apply it: nil for null/undefined,
 * `table: 0x…` for tables (not their contents), text for the rest.
 */
export function stringify(v: unknown): string {
  if (v === undefined || v === null) return 'nil'
  if (typeof v === 'string') return v
  if (Buffer.isBuffer(v)) return v.toString('utf8')
  if (typeof v === 'object') return luaString(v)
  return String(v)
}

// pdk/: the kit, the faces and the runner are all below it, and none of them is the plugin that called
const PDK_DIR = fileURLToPath(new URL('../../', import.meta.url))

/** `file:line` of the plugin code that called the kit, found on the stack. */
export function callSite(ctx: Context): string {
  if (ctx.site) return ctx.site
  const stack = new Error().stack?.split('\n') ?? []
  for (const frame of stack.slice(1)) {
    const m = /\(?((?:file:\/\/)?[^()\s]+):(\d+):\d+\)?$/.exec(frame)
    if (!m) continue
    const file = m[1]!.startsWith('file://') ? fileURLToPath(m[1]!) : m[1]!
    const kitSource = file.startsWith(PDK_DIR) && !/\.test\.[jt]s$/.test(file)
    if (kitSource || file.startsWith('node:') || file.includes('node_modules')) continue
    return `${basename(file)}:${m[2]}`
  }
  return '?:?'
}

/** nginx's name of an HTTP version: 1 → HTTP/1.0, 1.1 → HTTP/1.1, 2 → HTTP/2.0. */
export const protocolName = (version: number): string =>
  `HTTP/${Number.isInteger(version) ? version.toFixed(1) : String(version)}`

/** A full log line as the gateway writes it (no request part outside a request). */
export function formatLine(ctx: Context, label: string, message: string, site: string, plugin?: string): string {
  return formatBody(ctx, label, `${site} ${plugin ? `[${plugin}] ` : ''}${message}`)
}

/** A log line around an already formatted body (a `log.new` / `set_format` logger's own format). */
export function formatBody(ctx: Context, label: string, body: string): string {
  const head = `${timestamp(new Date(ctx.clock.now()))} [${label}] ${process.pid}#0: *1 [gateway] ${body}`
  if (ctx.phase === 'init_worker' || ctx.phase === 'timer') return head
  // nginx names what the request was doing: `while logging request` in the log phase (Kong's specs match it); the
  // words of the phases around the upstream (`while reading response header from upstream`, …) are left out
  if (ctx.phase === 'log' && ctx.subsystem !== 'stream') return `${head} while logging request${requestPart(ctx)}`
  return head + requestPart(ctx)
}

/** nginx's request context of an error log line: the client, the server, the request line and host. */
function requestPart(ctx: Context): string {
  const req = ctx.request
  const version = req.httpVersion === undefined ? '' : ` ${protocolName(req.httpVersion)}`
  const requestLine =
    ctx.subsystem === 'stream' ? '' : `, request: "${req.method} ${req.uri}${version}", host: "${req.host}"`
  return `, client: ${ctx.forwarded.ip}, server: kong${requestLine}`
}
