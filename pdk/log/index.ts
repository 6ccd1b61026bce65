/** pdk.log: leveled log lines, deprecation notices, and the serialized log record. */
import type { Context } from '../context.js'
import { checkPhase, phaseRule, SETS } from '../phases.js'

// Kong's log functions check no phase; the reference lists ALL
const LOG_PHASES = phaseRule('any', SETS.ALL)
import { callSite, formatLine, LABELS, stringify } from './line.js'
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
}

/** Builds pdk.log; lines carry the running plugin's name when called from a plugin. */
export function createLog(ctx: Context): PdkLog {
  const write = (level: string, message: string) => {
    const label = LABELS[level]!
    ctx.logs.push({ level: label, line: formatLine(ctx, label, message, callSite(ctx), ctx.plugin?.name) })
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
