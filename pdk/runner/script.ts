/** Runs a call-script plugin's phase: each call against the kit, checked against returns / throws. */
import { closest } from '../closest.js'
import type { Context } from '../context.js'
import type { ScriptCall } from '../fixture.js'
import { resolveCall, type KitFunction } from '../kit.js'
import type { Phase } from '../phases.js'
import { errorMessage, invoke, type Recorder } from '../trace.js'
import { toList } from '../values.js'
import { matches, plain, trimNulls } from './compare.js'
import type { Failure } from './expect.js'
import type { ScriptPlugin } from './plugins.js'

/** A call that threw where the script did not expect it: the plugin failed, as a Lua error would. */
export class PluginFailure extends Error {}

const toArg = (v: unknown) => (v === null ? undefined : v)

/** Makes a script's call some other way than on the kit directly (through the Lua face); records it itself. */
export type ScriptCaller = (path: string, args: unknown[]) => Promise<unknown>

/** Runs the calls of one phase; stops after a call that ends the phase (exit, error). */
export async function runScriptPhase(
  plugin: ScriptPlugin,
  phase: Phase,
  ctx: Context,
  index: Map<string, KitFunction>,
  record: Recorder,
  failures: Failure[],
  fileName: string,
  via?: ScriptCaller,
): Promise<void> {
  const calls: ScriptCall[] = plugin.phases[phase] ?? []
  for (let i = 0; i < calls.length; i++) {
    const step = calls[i]!
    const at = `$.plugins[${plugin.index}].phases.${phase}[${i}]`
    ctx.site = `${fileName}:${i + 1}`
    const found = resolveCall(index, step.call)
    if (!found) {
      const near = closest(step.call.replace(/^kong\./, ''), index.keys())
      const hint = near ? ` (did you mean ${near}?)` : ''
      record({ call: step.call, args: step.args ?? [], throws: `unknown kit function ${step.call}${hint}` })
      failures.push({ path: `${at}.call`, expected: `a kit function${hint}`, actual: step.call })
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
      if (step.throws !== undefined) {
        if (!message.includes(step.throws))
          failures.push({ path: `${at}.throws`, expected: step.throws, actual: message })
        continue
      }
      throw new PluginFailure(message)
    } finally {
      ctx.site = undefined
    }
    if (step.throws !== undefined)
      failures.push({ path: `${at}.throws`, expected: step.throws, actual: { returns: plain(toList(result)) } })
    else if (step.returns !== undefined) {
      const actual = trimNulls(plain(toList(result)) as unknown[])
      if (!matches(trimNulls(step.returns), actual))
        failures.push({ path: `${at}.returns`, expected: step.returns, actual })
    }
    if (ctx.phaseEnded) return
  }
}
