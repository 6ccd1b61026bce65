/**
 * `broker pdk test --record DIR`: each request a spec proxies becomes a fixture `broker pdk run`
 * replays to the same answer. The fixture holds the request as Kong in process ran it, the plugin
 * instances that ran (with their scope), the route, service, consumers and every row of the database,
 * the shared dictionaries, the clock and the spec's environment (the env vault) as the request found them, the service's answer, and what
 * the plugins made of it as `expect` (status, headers, body, what the service was sent, the errors
 * logged).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { stableUuid, type Fixture, type ScenarioResult } from './pdk.js'

/** What the spec's Lua sends with a recorded request (broker/spec/record.lua). */
export interface RecordState {
  /** The full name of the test that sent it, when a test (not a hook) did. */
  test?: string
  /** The spec's line that sent it (`spec/x_spec.lua:12`). */
  line?: string
  /** Every row of the database, as kong.db reads them. */
  db?: Record<string, unknown>
  /** ngx.shared.<dict> before the request: key → { value, ttl, flags }. */
  ngx_shared?: Record<string, unknown>
}

/** A plugin instance that ran, as the fixture names it. */
export interface RecordedPlugin {
  name: string
  id: string
  /** The handler.lua's folder, or the kong-js-pdk module. */
  module: string
  config: Record<string, unknown>
  route?: { id: string }
  service?: { id: string }
  consumer?: { id: string }
}

/** The fixtures of one spec file, numbered in the order the spec sent its requests. */
export class SpecRecorder {
  private count = 0

  constructor(
    /** The folder fixtures go to. */
    readonly dir: string,
    /** The spec file as results name it (relative to the root). */
    readonly shown: string,
    /** Folders `require` searches, as the replay must (the plugin root first). */
    readonly roots: string[],
    /** The files written, in order (shared by the run's spec files). */
    readonly written: string[] = [],
  ) {}

  /** Writes the fixture of one proxied request; returns its path. */
  write(fixture: Fixture, state: RecordState, plugins: RecordedPlugin[], clockMs: number, result: ScenarioResult) {
    const n = ++this.count
    const base = this.shown.replace(/\.lua$/, '').replace(/[^A-Za-z0-9_.-]+/g, '_')
    const file = join(this.dir, `${base}.${String(n).padStart(3, '0')}.json`)
    const from = (p: string) => relative(dirname(file), p).split('\\').join('/') || '.'
    const where = state.line ?? this.shown
    const errors = result.logs.filter((l) => l.level === 'error').map((l) => l.line.replace(/^.*?#0: /, ''))
    const recorded: Record<string, unknown> = {
      name: `${where}${state.test ? ` ${state.test}` : ''}: ${fixture.request.method ?? 'GET'} ${pathOf(fixture.request.url)}`,
      description: `Recorded by broker pdk test --record from ${this.shown} (request ${n}).`,
      time: clockMs / 1000,
      node: { id: stableUuid(`node:${fixture.name}`) },
      request: { ...fixture.request, id: stableUuid(`request:${fixture.name}`).replace(/-/g, '') },
      ...(fixture.config ? { config: fixture.config } : {}),
      kong_configuration: fixture.kong_configuration ?? { database: 'postgres' },
      // what helpers.setenv set, as the env vault the replay resolves the plugins' references from
      ...(Object.keys(fixture.vault?.env ?? {}).length ? { vault: { env: { ...fixture.vault!.env } } } : {}),
      lua_path: this.roots.map(from),
      ...(fixture.route ? { route: fixture.route } : {}),
      ...(fixture.service ? { service: fixture.service } : {}),
      consumers: fixture.consumers ?? [],
      db: tables(state.db),
      ngx_shared: state.ngx_shared ?? {},
      upstream: fixture.upstream,
      plugins: plugins.map((p) => ({ ...p, module: from(p.module) })),
      expect: {
        status: result.response.status,
        headers: result.response.headers,
        body: asJson(result.response.body),
        source: result.response.source,
        upstream_request: result.upstream_request && {
          ...result.upstream_request,
          body: asJson(result.upstream_request.body),
        },
        ...(errors.length ? { errors } : {}),
      },
    }
    mkdirSync(this.dir, { recursive: true })
    writeFileSync(file, JSON.stringify(recorded, null, 2) + '\n')
    this.written.push(file)
    return file
  }
}

// a JSON object or array is compared as JSON: a Lua table's keys come out of cjson in another order in another VM
function asJson(body: string): unknown {
  if (!/^\s*[[{]/.test(body)) return body
  try {
    return JSON.parse(body) as unknown
  } catch {
    return body
  }
}

// an empty Lua table crosses as {}: a table of rows is a list
const tables = (db: Record<string, unknown> | undefined): Record<string, unknown[]> =>
  Object.fromEntries(Object.entries(db ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v : []]))

const pathOf = (url: string): string => url.replace(/^[a-z]+:\/\/[^/]*/i, '') || '/'
