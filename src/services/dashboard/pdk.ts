import { basename } from 'node:path'
import { FixtureError, loadFixture } from '../../../pdk/fixture/index.js'
import { type PhaseTrace, type ResponseSnapshot, runScenario, type ScenarioResult } from '../../../pdk/runner/index.js'
import { closePlugins, preparePlugins } from '../../../pdk/runner/plugins.js'
import { expandPaths } from '../pdk/run.js'

/** One step of a replay: a plugin's phase, and the response as it stood after it. */
export interface ReplayStep {
  trace: PhaseTrace
  response: ResponseSnapshot
}

export interface Replay {
  name: string
  file: string
  steps: ReplayStep[]
  result: ScenarioResult
}

/** The fixture files of a folder (its *.json, in name order). */
export function listFixtures(dir: string): string[] {
  return expandPaths([dir]).filter((file) => file.endsWith('.json') && file !== dir)
}

/** Replays one fixture, keeping the response after every phase so it can be shown step by step. */
export async function replayFixture(file: string): Promise<Replay> {
  try {
    const loaded = loadFixture(file)
    const plugins = await preparePlugins(loaded)
    const steps: ReplayStep[] = []
    try {
      const result = await runScenario(loaded, plugins, {
        afterPhase: (trace, response) => steps.push({ trace, response }),
      })
      return { name: result.name, file: basename(file), steps, result }
    } finally {
      // the dashboard replays again and again in one process: each replay's Lua VMs are freed
      closePlugins(plugins)
    }
  } catch (e) {
    if (e instanceof FixtureError) throw new Error(`${basename(file)}: ${e.message}`, { cause: e })
    throw e
  }
}
