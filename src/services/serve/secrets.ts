import { randomBytes } from 'node:crypto'
import type { BrokerConfig } from '../../config/schema.js'
import type { ResolvedConfig } from '../../broker/deps.js'

/**
 * Fills in session.secret when the config lacks it, generated for this run, and says so (so
 * `serve` can warn that several instances need it set).
 */
export function resolveSecrets(config: Readonly<BrokerConfig>): { config: ResolvedConfig; generated: string[] } {
  const generated: string[] = []
  const gen = (name: string) => {
    generated.push(name)
    return randomBytes(32).toString('base64url')
  }
  const resolved = {
    ...config,
    session: { ...config.session, secret: config.session.secret ?? gen('session.secret') },
  }
  return { config: Object.freeze(resolved) as ResolvedConfig, generated }
}
