import { CONFIG_KEYS } from '../../config/keys.js'
import { drainDelayMs } from '../../config/runtime.js'
import { type ServeOptions, type ServePlan, resolveServeConfig } from './config.js'
import { HANDOVER_ENV, type Handover } from './handover.js'
import { type PrimaryPlan, type ServeResult, runPrimary } from './primary.js'

export type { ServeOptions } from './config.js'
export { drainNotice, type ServeResult } from './primary.js'

/**
 * `broker serve`: resolves the config (file, flags, environment, the Redis probe), then runs the
 * primary. Started by bin/run.js's lean entry (src/cli/serve-main.ts) to resolve only, it hands the plan to that
 * process instead, which runs the primary without the CLI, the schema or Redis loaded, and exits.
 */
export async function serve(opts: ServeOptions & { json?: boolean }): Promise<ServeResult> {
  const plan = primaryPlan(await resolveServeConfig(opts))
  if (process.env[HANDOVER_ENV] === '1' && process.send) {
    await new Promise<void>((sent, failed) =>
      process.send!({ type: 'serve-plan', plan, json: opts.json ?? false } satisfies Handover, (err: Error | null) =>
        err ? failed(err) : sent(),
      ),
    )
    // This process's work ends here: the one that started it is the primary.
    process.exit(0)
  }
  return runPrimary(plan)
}

function primaryPlan(p: ServePlan): PrimaryPlan {
  const { config, driver, cwd, connectionName } = p
  return {
    setup: { config, driver, cwd, connectionName },
    pidFile: p.pidFile,
    url: p.url,
    storeLabel: p.storeLabel,
    drainDelayMs: drainDelayMs(config),
    secretEnv: CONFIG_KEYS.filter((key) => key.secret).map((key) => key.env),
  }
}
