// What `broker serve`'s resolving process hands the primary (main.ts); apart from both, so neither
// imports the other.
import type { PrimaryPlan } from './primary.js'

/** Set in the environment of the process main.ts starts to resolve the config: hand over, do not serve. */
export const HANDOVER_ENV = 'BROKER_SERVE_HANDOVER'

/** The one message of a resolving process: the primary's plan, and whether the user asked for --json. */
export interface Handover {
  type: 'serve-plan'
  plan: PrimaryPlan
  json: boolean
}
