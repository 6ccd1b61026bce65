import { type Logger, destination, pino } from 'pino'
import { redactDeep } from './redact.js'

/** The one pino logger of a process, JSON lines on stderr; shared with Fastify. */
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      // Belt and braces: even a debug line must not print a secret that slipped into an object, at
      // any depth: the same list of secret names as /hash-check, URL credentials scrubbed too.
      formatters: { log: (object) => redactDeep(object) as Record<string, unknown> },
    },
    destination({ fd: 2, sync: false }),
  )
}

export { notice } from './notice.js'
