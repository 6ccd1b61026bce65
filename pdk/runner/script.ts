/**
 * Call scripts (a fixture's `phases` of kit calls) as plugin handlers: each call against the kit, kept with
 * what the step says of it for the verdict.
 */
import { closest } from '../../util/closest.js'
import type { ScriptCall } from '../fixture/index.js'
import { flatten, resolveCall, type KitFunction } from '../kit/index.js'
import { RAN, type PluginHandler, type Scene } from '../kit/private/handler.js'
import type { Phase } from '../kit/private/phases.js'
import { errorMessage, invoke, type Recorder } from '../kit/private/trace.js'
import { toList } from '../kit/private/values.js'
import { plain } from '../fixture/compare.js'
import type { ScriptStep } from './record.js'

const toArg = (v: unknown) => (v === null ? undefined : v)

/** Makes a script's call some other way than on the kit directly (through the Lua face); records it itself. */
export type ScriptCaller = (scene: Scene, path: string, args: unknown[]) => Promise<unknown>

/** A call-script plugin of a fixture. */
export interface ScriptSpec {
  index: number
  name: string
  id: string
  config: Record<string, unknown>
  phases: Partial<Record<Phase, ScriptCall[]>>
}

// every kit function by its path, built once per request and only for requests with a call script
const INDEX = Symbol('kit index')
const indexOf = (scene: Scene): Map<string, KitFunction> => {
  let index = scene.kept.get(INDEX) as Map<string, KitFunction> | undefined
  if (!index) scene.kept.set(INDEX, (index = flatten(scene.kit)))
  return index
}

/** A call script as a plugin handler: it has the phases that list calls; `via` makes its calls another way. */
export function scriptHandler(spec: ScriptSpec, fileName: string, via?: ScriptCaller): PluginHandler {
  const phases = new Set(Object.entries(spec.phases).flatMap(([p, calls]) => (calls?.length ? [p] : [])))
  return {
    index: spec.index,
    name: spec.name,
    id: spec.id,
    config: spec.config,
    priority: 0,
    phases,
    async run(handler, scene) {
      if (handler === 'configure') return RAN
      const ran = await runScriptPhase(spec, handler, scene, fileName, via)
      // a call that threw where its step states no `throws`: the plugin failed, as a Lua error would
      return ran.error === undefined ? { steps: ran.steps } : { steps: ran.steps, failed: ran.error }
    },
  }
}

/** A script phase as it ran: its steps, and the message of a call that threw where the step states no `throws` (the phase fails). */
export interface ScriptPhaseResult {
  steps: ScriptStep[]
  error?: string
}

/** Runs the calls of one phase; stops after a call that ends the phase (exit, error) or throws unexpectedly. */
async function runScriptPhase(
  plugin: ScriptSpec,
  phase: Phase,
  scene: Scene,
  fileName: string,
  via?: ScriptCaller,
): Promise<ScriptPhaseResult> {
  const { ctx, record } = scene
  const index = indexOf(scene)
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
      result = via
        ? await via(scene, path, args)
        : await invoke(fn as (...a: unknown[]) => unknown, path, args, recordStep)
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
