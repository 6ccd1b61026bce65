/** What a replay produced, as plain data: the input of the verdict (verdict.ts) and of its reports. */
import type { HeadersTable } from '../kit/private/headers.js'
import type { SentRequest } from '../kit/context.js'
import type { ScriptStep } from '../kit/private/trace.js'

export type { ScriptStep } from '../kit/private/trace.js'

/** What the upstream service was sent. */
export interface UpstreamSnapshot {
  method: string
  path: string
  query: string
  headers: HeadersTable
  body: string
}

/** Everything of a replay the verdict looks at, as plain data. */
export interface RunRecord {
  /** The call scripts' calls, in the order they ran. */
  steps: readonly ScriptStep[]
  /** The final response; `body` null when nothing set one. */
  response: { status: number; headers: HeadersTable; body: string | null; source: 'exit' | 'error' | 'service' }
  /** What the upstream was sent, or null when the request never reached it. */
  upstream: UpstreamSnapshot | null
  logs: ReadonlyArray<{ level: string; line: string }>
  telemetry: readonly unknown[]
  /** The requests Lua plugins sent with resty.http, in order (answered from the fixture's `outbound`). */
  outbound: readonly SentRequest[]
  /** Each plugin's phase, with the error that ended it (a phase error, a timeout, a plugin exception). */
  phases: ReadonlyArray<{ phase: string; plugin: string; error?: string }>
}
