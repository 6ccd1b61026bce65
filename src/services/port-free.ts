import { createServer } from 'node:net'
import { brokerError } from '../errors/index.js'

/**
 * Refuses a port something else listens on, before anything else is done or said: found only when
 * the workers (serve) or the server (dashboard) listened, a busy port came after notices about the
 * store and the secrets and, for the dashboard, as a failure rather than a usage error.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return
  const probe = createServer()
  const busy = await new Promise<boolean>((resolve) => {
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE'))
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(false)))
  })
  // Anything else (EACCES, an address not on this machine) is for the real listen to report.
  if (busy) throw brokerError('portInUse', { port })
}
