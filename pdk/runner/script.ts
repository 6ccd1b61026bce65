/** Runs a call-script plugin's phase: each call against the kit, kept with what the step says of it for the verdict. */
import { closest } from '../../util/closest.js'
import type { Context } from '../kit/context.js'
import type { ScriptCall } from '../fixture/index.js'
import { resolveCall, type KitFunction } from '../kit/index.js'
import type { Phase } from '../kit/private/phases.js'
import { errorMessage, invoke, type Recorder } from '../kit/private/trace.js'
import { toList } from '../kit/private/values.js'
import { plain } from '../fixture/compare.js'
import type { ScriptPlugin } from './plugins.js'
import type { ScriptStep } from './record.js'

const toArg = (v: unknown) => (v === null ? undefined : v)

/** Makes a script's call some other way than on the kit directly (through the Lua face); records it itself. */
export type ScriptCaller = (path: string, args: unknown[]) => Promise<unknown>

/** A script phase as it ran: its steps, and the message of a call that threw where the step states no `throws` (the phase fails). */
export interface ScriptPhaseResult {
  steps: ScriptStep[]
  error?: string
}

/** Runs the calls of one phase; stops after a call that ends the phase (exit, error) or throws unexpectedly. */
export async function runScriptPhase(
  plugin: ScriptPlugin,
  phase: Phase,
  ctx: Context,
  index: Map<string, KitFunction>,
  record: Recorder,
  fileName: string,
  via?: ScriptCaller,
): Promise<ScriptPhaseResult> {
  const calls: ScriptCall[] = plugin.phases[phase] ?? []
  const steps: ScriptStep[] = []
  for (let i = 0; i < calls.length; i++) {
    const step = calls[i]!
    const said = {
      at: `$.plugins[${plugin.index}].phases.${phase}[${i}]`,
      call: step.call,
      ...(step.returns !== undefined ? { returns: step.returns } : {}),
      ...(step.throws !== undefined ? { throws: step.throws } : {}),
    }
    ctx.site = `${fileName}:${i + 1}`
    const found = resolveCall(index, step.call)
    if (!found) {
      const near = closest(step.call.replace(/^kong\./, ''), index.keys())
      const hint = near ? ` (did you mean ${near}?)` : ''
      record({ call: step.call, args: step.args ?? [], throws: `unknown kit function ${step.call}${hint}` })
      steps.push({ ...said, outcome: { kind: 'unknown', ...(near ? { near } : {}) } })
      continue
    }
    const [path, fn] = found
    // A throw the fixture expects is recorded as expected, so the trace does not show it as a failure.
    const expectThrow = step.throws
    const recordStep: Recorder =
      expectThrow === undefined
        ? record
        : (r) => record(r.throws !== undefined && r.throws.includes(expectThrow) ? { ...r, expected: true } : r)
    let result: unknown
    try {
      const args = (step.args ?? []).map(toArg)
      result = via ? await via(path, args) : await invoke(fn as (...a: unknown[]) => unknown, path, args, recordStep)
    } catch (e) {
      const message = errorMessage(e)
      steps.push({ ...said, outcome: { kind: 'threw', message } })
      // a throw the step does not state fails the plugin's phase, as a Lua error would
      if (step.throws === undefined) return { steps, error: message }
      continue
    } finally {
      ctx.site = undefined
    }
    steps.push({ ...said, outcome: { kind: 'returned', values: plain(toList(result)) as unknown[] } })
    if (ctx.phaseEnded) break
  }
  return { steps }
}
