import type { Logger } from 'pino'
import type { BrokerConfig } from '../config/schema.js'
import type { FlowEvents } from './events.js'
import type { FlowStore } from './store/flow-store.js'
import type { PluginRegistry } from './endpoints/plugins.js'

/** Configuration whose session secret is known (given, or generated for this run). */
export type ResolvedConfig = Readonly<BrokerConfig> & {
  readonly session: { readonly secret: string }
}

/** What the broker's services need; built once per process and passed down. */
export interface BrokerDeps {
  readonly config: ResolvedConfig
  readonly store: FlowStore
  readonly plugins: PluginRegistry
  readonly events: FlowEvents
  readonly log: Logger
}
