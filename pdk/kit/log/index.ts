/** pdk.log: leveled log lines, deprecation notices, and the serialized log record. */
import type { Context } from '../context.js'
import { checkPhase, phaseRule, SETS } from '../private/phases.js'

// Kong's log functions check no phase; the reference lists ALL
const LOG_PHASES = phaseRule('any', SETS.ALL)
import { callSite, formatBody, formatLine, LABELS, stringify } from './line.js'
import { serialize, setSerializeValue } from './serialize.js'

type LogFn = (...args: unknown[]) => void

export interface PdkLog {
  emerg: LogFn
  alert: LogFn
  crit: LogFn
  err: LogFn
  warn: LogFn
  notice: LogFn
  info: LogFn
  debug: LogFn
  deprecation: LogFn
  serialize: () => Record<string, unknown>
  set_serialize_value: (key: string, value: unknown, options?: { mode?: string }) => void
  /** A logger of its own: lines tagged `[namespace]`, or written in `format`. */
  new: (namespace: unknown, format?: unknown) => PdkLog
  /** Kong's format modifiers: %file_src, %line_src, %func_name, %namespace, %message. */
  set_format: (format?: unknown) => void
  /** Pretty-prints its arguments at notice level (`[core]` or the namespace); `.off()` / `.on()` silence it. */
  inspect: LogFn & { on: () => void; off: () => void }
}

/** The `inspect` library's rendering of a Lua value, as kong.log.inspect prints it. */
function inspectValue(v: unknown, depth = 0): string {
  if (v === undefined || v === null) return 'nil'
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v !== 'object' || Buffer.isBuffer(v)) return stringify(v)
  const pad = '  '.repeat(depth + 1)
  const entries = Array.isArray(v)
    ? v.map((x) => inspectValue(x, depth + 1))
    : Object.keys(v)
        .sort()
        .map((k) => {
          const key = /^[A-Za-z_]\w*$/.test(k) ? k : `[${JSON.stringify(k)}]`
          return `${key} = ${inspectValue((v as Record<string, unknown>)[k], depth + 1)}`
        })
  if (entries.length === 0) return '{}'
  return `{\n${entries.map((e) => pad + e).join(',\n')}\n${'  '.repeat(depth)}}`
}

/** A format's modifiers filled in (`%%` stays a literal percent sign, as Kong's split keeps it). */
function applyFormat(format: string, site: string, message: string, namespace: string | undefined): string {
  const colon = site.lastIndexOf(':')
  const values: Record<string, string> = {
    file_src: colon === -1 ? site : site.slice(0, colon),
    line_src: colon === -1 ? '?' : site.slice(colon + 1),
    func_name: '?',
    message,
    namespace: namespace ?? '?',
  }
  return format.replace(/(?<!%)%([a-z_]+)/g, (m, name: string) => (Object.hasOwn(values, name) ? values[name]! : m))
}

/** Builds pdk.log; lines carry the running plugin's name (or the logger's namespace). */
export function createLog(ctx: Context, namespace?: string, initialFormat?: string): PdkLog {
  let format = initialFormat
  let inspecting = true
  const write = (level: string, message: string) => {
    const label = LABELS[level]!
    const site = callSite(ctx)
    const line =
      format !== undefined
        ? formatBody(ctx, label, applyFormat(format, site, message, namespace))
        : formatLine(ctx, label, message, site, namespace ?? ctx.plugin?.name)
    ctx.logs.push({ level: label, line })
  }
  const leveled =
    (level: string): LogFn =>
    (...args) => {
      checkPhase(ctx, LOG_PHASES)
      if (args.length === 0) throw new Error('expected at least one argument to log')
      write(level, args.map(stringify).join(''))
    }
  return {
    emerg: leveled('emerg'),
    alert: leveled('alert'),
    crit: leveled('crit'),
    err: leveled('err'),
    warn: leveled('warn'),
    notice: leveled('notice'),
    info: leveled('info'),
    debug: leveled('debug'),
    deprecation(...args) {
      checkPhase(ctx, LOG_PHASES)
      if (args.length === 0) throw new Error('expected at least one argument to log')
      const last = args[args.length - 1]
      // as Kong's deprecation.raise: any final table is the metadata, even when it is the only argument
      const meta =
        typeof last === 'object' && last !== null && !Array.isArray(last)
          ? (last as { after?: unknown; removal?: unknown; trace?: unknown })
          : undefined
      const parts = meta ? args.slice(0, -1) : args
      let message = parts.map(stringify).join('')
      if (meta) {
        const { after, removal, trace } = meta
        if (after !== undefined && typeof after !== 'string')
          throw new Error('deprecation "after" must be a version string')
        if (removal !== undefined && typeof removal !== 'string')
          throw new Error('deprecation "removal" must be a version string')
        if (after && removal) message += ` (deprecated after ${after}, scheduled for removal in ${removal})`
        else if (after) message += ` (deprecated after ${after})`
        else if (removal) message += ` (scheduled for removal in ${removal})`
        if (trace === true) {
          const stack = (new Error().stack ?? '')
            .split('\n')
            .slice(2)
            .map((l) => '\t' + l.trim())
            .join('\n')
          message += ` stack traceback:\n${stack}`
        }
      }
      write('warn', message)
    },
    new(ns: unknown, fmt?: unknown): PdkLog {
      if (typeof ns !== 'string') throw new Error('namespace must be a string')
      if (ns === '') throw new Error('namespace cannot be an empty string')
      if (fmt !== undefined && fmt !== null) {
        if (typeof fmt !== 'string') throw new Error('format must be a string if specified')
        if (fmt === '') throw new Error('format cannot be an empty string if specified')
      }
      return createLog(ctx, ns, (fmt as string | null | undefined) ?? undefined)
    },
    set_format(fmt?: unknown): void {
      if (fmt !== undefined && fmt !== null && typeof fmt !== 'string') throw new Error('format must be a string')
      format = (fmt as string | null | undefined) ?? undefined
    },
    inspect: Object.assign(
      (...args: unknown[]) => {
        checkPhase(ctx, LOG_PHASES)
        if (inspecting) write('notice', `[${namespace ?? 'core'}]\n${args.map((a) => inspectValue(a)).join(' ')}`)
      },
      { on: (): void => void (inspecting = true), off: (): void => void (inspecting = false) },
    ),
    serialize: () => serialize(ctx),
    set_serialize_value: (key, value, options) => setSerializeValue(ctx, key, value, options),
  }
}

/** A core (non-plugin) logger the other modules use for their own notices. */
export function coreLog(ctx: Context) {
  return {
    warn: (msg: string): void =>
      void ctx.logs.push({ level: 'warn', line: formatLine(ctx, 'warn', msg, callSite(ctx), ctx.plugin?.name) }),
    err: (msg: string): void =>
      void ctx.logs.push({ level: 'error', line: formatLine(ctx, 'error', msg, callSite(ctx), ctx.plugin?.name) }),
  }
}
