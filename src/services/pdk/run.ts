/** `broker pdk run`: loads fixtures, replays each scenario, and reports in the shape --json prints. */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { brokerError, type BrokerError } from '../../errors/index.js'
import { resolveShipped } from './shipped.js'
import { FixtureError, loadFixture, type LoadedFixture } from '../../../pdk/fixture/index.js'
import { runScenario, type ScenarioResult } from '../../../pdk/runner/index.js'
import { PluginServers, StartError } from '../../../pdk/plugin-server/index.js'
import { closePlugins, preparePlugins, type PluginHandler } from '../../../pdk/runner/plugins.js'
import { exitCodeOf, verdict, type ErrorVerdict } from '../../../pdk/runner/verdict.js'

export interface PdkRunOptions {
  /** Fixture files, or directories whose *.json files are fixtures. */
  paths: string[]
  /** Also fail calls made outside the phases the reference lists. */
  strict?: boolean
  /** Run every module plugin on the real kong-js-pluginserver (else only those whose fixture says plugin_server). */
  pluginServer?: boolean
  /** A shell command line of another plugin server speaking Kong's MessagePack-RPC. */
  pluginServerCmd?: string
  /** Milliseconds a plugin event may take before Kong gives up on it (a hung plugin); 10000. */
  pluginServerTimeout?: number
  /** Milliseconds a Lua plugin's phase may run before it is stopped (an endless loop); pluginServerTimeout when absent. */
  timeout?: number
  /** More folders Lua plugins' `require` searches (`--lua-path`), after each fixture's `lua_path`. */
  luaPath?: string[]
  /** The folder of the fixtures shipped with broker, which a bare name (`js-hello`) runs from. */
  shipped?: string
}

/** The registry error the CLI prints for a fixture whose verdict is `error` (it cannot run: exit 2), by what is wrong. */
function fixtureError({ error: e }: ErrorVerdict) {
  const details = { message: e.message, file: e.file, path: e.path }
  if (e.kind === 'config') return brokerError('pluginConfigInvalid', details)
  if (e.kind === 'module') return brokerError('luaModuleUnsupported', details)
  if (e.kind === 'ngx-api') return brokerError('luaNgxUnsupported', details)
  if (e.kind === 'lua-path') return brokerError('luaModuleNotFound', details)
  if (e.kind === 'lua-syntax') return brokerError('luaSyntax', details)
  if (e.kind === 'lua-syntax-library') return brokerError('luaSyntaxLibrary', details)
  if (e.kind === 'luajit-syntax') return brokerError('luajitSyntax', details)
  if (e.kind === 'outbound') return brokerError('outboundUnmatched', details)
  return brokerError(e.kind === 'unreadable' ? 'fixtureUnreadable' : 'fixtureInvalid', details)
}

/** One fixture's report, exactly as `--json` prints it. */
export interface FixtureReport {
  name: string
  passed: boolean
  response: ScenarioResult['response']
  upstream_request: ScenarioResult['upstream_request']
  phases: ScenarioResult['phases']
  logs: ScenarioResult['logs']
  failures: ScenarioResult['failures']
}

export interface PdkRunResult {
  fixtures: FixtureReport[]
}

/**
 * Files named on the command line, directories expanded to their *.json files in name order. A
 * folder without one, or a pattern the shell found nothing for (it passes it on as it is), is an
 * error: a run of nothing passes, which hides a typo in CI.
 */
export function expandPaths(paths: string[]): string[] {
  return paths.flatMap((p) => {
    let isDir = false
    let exists = true
    try {
      isDir = statSync(p).isDirectory()
    } catch {
      // unreadable paths are reported by the loader with their name
      exists = false
    }
    if (!exists && /[*?[]/.test(p)) throw brokerError('noFixtureFound', { path: p })
    if (!isDir) return [p]
    const files = readdirSync(p)
      .filter((n) => n.endsWith('.json'))
      .sort()
      .map((n) => join(p, n))
    if (!files.length) throw brokerError('noFixtureFound', { path: p })
    return files
  })
}

/**
 * Loads every fixture and its plugins first; a fixture that cannot run (a bad field, a plugin requiring what
 * broker does not emulate) is set aside with its error, so it hides none of the others.
 */
async function prepare(
  paths: string[],
  options: Parameters<typeof preparePlugins>[1],
  stopped: BrokerError[],
): Promise<Array<[LoadedFixture, PluginHandler[]]>> {
  const out: Array<[LoadedFixture, PluginHandler[]]> = []
  try {
    // one after another: a Lua fixture's VM is built while it loads
    for (const path of expandPaths(paths)) {
      try {
        const l = loadFixture(path)
        out.push([l, await preparePlugins(l, options)])
      } catch (e) {
        if (!(e instanceof FixtureError)) throw e
        stopped.push(fixtureError(verdict(undefined, e)))
      }
    }
    return out
  } catch (e) {
    for (const [, p] of out) closePlugins(p)
    throw e
  }
}

/** The fixtures that could not run, as one error: the first's code and next step, each one's message a line. */
function stoppedError(stopped: BrokerError[]): BrokerError | undefined {
  const [first, ...others] = stopped
  if (first && others.length)
    first.message = [first.message, ...others.map((e) => `${e.code}: ${e.message}`)].join('\n')
  return first
}

/** Replays the fixtures in order; results are per fixture, reports keep the --json shape. */
export async function runFixtures(options: PdkRunOptions): Promise<{
  results: ScenarioResult[]
  report: PdkRunResult
  exitCode: 0 | 1 | 2
  /** The fixtures that could not run (exit 2), as one error the command raises after printing the others. */
  stopped?: BrokerError
}> {
  const { shipped } = options
  const paths = shipped ? options.paths.map((p) => resolveShipped(p, shipped)) : options.paths
  const stopped: BrokerError[] = []
  const timeoutMs = options.timeout ?? options.pluginServerTimeout ?? 10_000
  // module plugins that run on a plugin server register with it as they load; it starts once all are known
  const servers = new PluginServers({ command: options.pluginServerCmd, timeoutMs })
  const all = options.pluginServer === true
  const prepared = await prepare(paths, { all, servers, lua: { luaPath: options.luaPath } }, stopped)
  await servers.prepare().catch(async (e: unknown) => {
    await servers.close()
    for (const [, plugins] of prepared) closePlugins(plugins)
    throw e instanceof StartError ? brokerError('pluginServerUnavailable', { reason: e.message }) : e
  })
  const results: ScenarioResult[] = []
  try {
    for (const [loaded, plugins] of prepared) {
      try {
        results.push(await runScenario(loaded, plugins, {}, { strict: options.strict, timeoutMs }))
      } catch (e) {
        // a fixture that cannot run after all (a Lua plugin requiring an unemulated module) is set aside
        if (!(e instanceof FixtureError)) throw e
        stopped.push(fixtureError(verdict(loaded.fixture.expect, e)))
      }
    }
  } finally {
    await servers.close()
    for (const [, plugins] of prepared) closePlugins(plugins)
  }
  const report = {
    fixtures: results.map((r) => ({
      name: r.name,
      passed: r.verdict.status === 'pass',
      response: r.response,
      upstream_request: r.upstream_request,
      phases: r.phases.map(({ phase, plugin, calls }) => ({ phase, plugin, calls })),
      logs: r.logs,
      failures: r.verdict.failures,
    })),
  }
  const exitCode = stopped.length ? 2 : exitCodeOf(results.map((r) => r.verdict))
  return { results, report, exitCode, stopped: stoppedError(stopped) }
}
