import { randomBytes } from 'node:crypto'
import type { BrokerConfig } from '../../config/schema.js'
import type { ResolvedConfig } from '../../broker/deps.js'

/**
 * Fills in cookie.secret and session.secret when the config lacks them, generated for this run,
 * and says which were generated (so `serve` can warn that several instances need them set).
 */
export function resolveSecrets(config: Readonly<BrokerConfig>): { config: ResolvedConfig; generated: string[] } {
  const generated: string[] = []
  const gen = (name: string) => {
    generated.push(name)
    return randomBytes(32).toString('base64url')
  }
  const resolved = {
    ...config,
    cookie: { ...config.cookie, secret: config.cookie.secret ?? gen('cookie.secret') },
    session: { ...config.session, secret: config.session.secret ?? gen('session.secret') },
  }
  return { config: Object.freeze(resolved) as ResolvedConfig, generated }
}
