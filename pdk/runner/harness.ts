/** Builds a kit on a fixture-shaped request outside a scenario: for unit tests and the bench. */
import type { Context } from '../kit/context.js'
import type { Fixture } from '../fixture/index.js'
import { createKit } from '../kit/index.js'
import type { Phase } from '../kit/private/phases.js'
import { buildContext } from '../fixture/setup.js'
import type { createRequest } from '../kit/request/index.js'
import type { createResponse } from '../kit/response/index.js'
import type { createClient } from '../kit/client/index.js'
import type { createClientTls } from '../kit/client/tls.js'
import type { PdkLog } from '../kit/log/index.js'

export interface TypedKit {
  request: ReturnType<typeof createRequest>
  response: ReturnType<typeof createResponse>
  client: ReturnType<typeof createClient> & { tls: ReturnType<typeof createClientTls> }
  log: PdkLog
  // The other modules untyped: tests call them with wrong argument types to check the run-time errors.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [module: string]: any
}

/** A context and its kit for `fixture` (only `request.url` is needed), in `phase`; `strict` as --strict. */
export function kitFor(
  fixture: Omit<Partial<Fixture>, 'request'> & { request?: Partial<Fixture['request']> } = {},
  phase: Phase = 'access',
  options: { strict?: boolean } = {},
): { ctx: Context; kit: TypedKit } {
  const f = {
    name: 'test',
    plugins: [],
    ...fixture,
    request: { url: 'http://example.com/', ...(fixture.request ?? {}) },
  } as Fixture
  const ctx = buildContext(f)
  ctx.phase = phase
  ctx.strict = options.strict === true
  ctx.plugin = { name: 'test-plugin', id: 'id-1', config: {} }
  return { ctx, kit: createKit(ctx) as unknown as TypedKit }
}
