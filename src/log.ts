import { type Logger, destination, pino } from 'pino'

/** The one pino logger of a process, JSON lines on stderr; shared with Fastify. */
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      // Belt and braces: even a debug line must not print a secret that slipped into an object.
      redact: {
        paths: [
          '*.client_secret',
          '*.consumer_secret',
          '*.password',
          '*.access_token',
          '*.refresh_token',
          '*.private_key',
          'req.headers.authorization',
          'req.headers.cookie',
        ],
        censor: '[redacted]',
      },
    },
    destination({ fd: 2, sync: false }),
  )
}

/** A one-line human notice on stderr (start-up facts, warnings), apart from the JSON log. */
export function notice(message: string): void {
  process.stderr.write(`broker: ${message}\n`)
}
