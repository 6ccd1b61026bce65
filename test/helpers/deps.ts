import { configSchema, type ConfigInput } from '../../src/config/schema.js'
import { type Broker, createBroker } from '../../src/broker/index.js'
import { resolveSecrets } from '../../src/services/serve/secrets.js'

/** A broker wired to the embedded store, for route tests with `inject`. */
export async function memoryBroker(input: ConfigInput = {}): Promise<Broker> {
  const parsed = configSchema.parse({ log: { level: 'silent' }, ...input })
  return createBroker(resolveSecrets(parsed).config, 'memory')
}
