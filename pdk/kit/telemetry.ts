/** pdk.telemetry: structured log entries for the OpenTelemetry export plugin. */
import type { Context, Table } from './context.js'
import { checkPhase, phaseRule, phaseSet } from './private/phases.js'
import { values, type Values } from './private/values.js'

// Kong's telemetry.log checks no phase; the reference's list holds under --strict
const TELEMETRY_PHASES = phaseRule(
  'any',
  phaseSet('rewrite', 'access', 'balancer', 'timer', 'header_filter', 'response', 'body_filter', 'log'),
)

/** Builds pdk.telemetry for a request context; entries land in ctx.telemetry. */
export function createTelemetry(ctx: Context) {
  return {
    log(
      plugin_name: string,
      plugin_config: Table,
      message_type: string,
      message?: string,
      attributes?: Table,
    ): true | Values {
      checkPhase(ctx, TELEMETRY_PHASES)
      if (typeof plugin_name !== 'string') return values(undefined, 'plugin_name must be a string')
      if (typeof plugin_config !== 'object' || plugin_config === null)
        return values(undefined, 'plugin_config must be a table')
      if (typeof message_type !== 'string') return values(undefined, 'message_type must be a string')
      if (message !== undefined && message !== null && typeof message !== 'string')
        return values(undefined, 'message must be a string')
      if (attributes !== undefined && attributes !== null && typeof attributes !== 'object')
        return values(undefined, 'attributes must be a table')
      if (!ctx.config.telemetry_logs) {
        return values(
          undefined,
          'Telemetry logging is disabled: log entry will not be recorded. Ensure the OpenTelemetry plugin is correctly configured to report logs in order to use this feature.',
        )
      }
      const attrs: Table = {
        ...(attributes ?? {}),
        'message.type': message_type,
        'plugin.name': plugin_name,
        'plugin.id': plugin_config.__plugin_id,
        'plugin.instance.name': plugin_config.plugin_instance_name,
      }
      ctx.telemetry.push({ plugin: plugin_name, message_type, message: message ?? undefined, attributes: attrs })
      return true
    },
  }
}
