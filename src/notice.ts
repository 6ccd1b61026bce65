/**
 * A one-line human notice on stderr (start-up facts, warnings), apart from the JSON log. Its own
 * module, away from log.ts (pino): `broker serve`'s primary prints notices and loads no logger.
 */
export function notice(message: string): void {
  process.stderr.write(`broker: ${message}\n`)
}
