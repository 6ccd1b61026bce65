import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  brokerError,
  BrokerError,
  ERRORS,
  fromBrokerAnswer,
  MESSAGES,
  type MessageArgs,
  type MessageId,
} from './index.js'

// Values as throw sites pass them (files relative, as a user names them). A new message id does
// not compile until it has its sample here.
const SAMPLES: { [Id in MessageId]: MessageArgs<Id> } = {
  hashRequired: [],
  pluginServerUnavailable: [{ reason: 'the plugin server exited with status 1 before listening' }],
  notPollingFlow: [{ plugin: 'oauth_2_3-legged' }],
  notSigningFlow: [{ plugin: 'oauth_2_3-legged' }],
  resultRequired: [],
  recordNotObject: [],
  tooManyFields: [{ max: 64 }],
  invalidRecord: [{ fields: { client_id: 'is required', token_url: 'must be an absolute http(s) URL' } }],
  jsonTooDeep: [{ depth: 32 }],
  invalidJson: [],
  contentLengthMismatch: [],
  invalidRequest: [{ part: 'querystring', fields: { hash: 'must NOT have more than 128 characters' } }],
  badRequest: [{ message: 'Request header fields too large' }],
  configUnreadable: [{ file: 'config/prod.js' }],
  configLoadFailed: [{ file: 'config/prod.js', reason: 'Unexpected token }' }],
  configNotObject: [{ file: 'config/prod.js' }],
  configInvalid: [{ problems: ['port (config/prod.js): Expected number, received string'], key: 'port' }],
  pidFileUnwritable: [{ file: 'run/broker.pid', reason: 'EACCES: permission denied' }],
  pidFileInUse: [{ file: 'run/.broker.pid', pid: 4242 }],
  // ── issue 27 (ops) ──
  pidFileNotPlain: [{ file: 'run/.broker.pid' }],
  storeNotReplicated: [{ acked: 0, replicas: 1 }],
  storeFull: [],
  sessionSecretNotShared: [{ prefix: 'broker:', generated: true }],
  // ── end issue 27 (ops) ──
  sharedSecretsMissing: [{ missing: ['session.secret'], shared: 'cluster' }],
  cliUsage: [{ message: 'Missing required argument: hash; see --help.' }],
  commandNotFound: [{ typed: 'stroe', bin: 'broker', suggestion: 'store' }],
  walkNeedsUrl: [{ url: 'example.com' }],
  walkHttpOnly: [{ url: 'ftp://example.com' }],
  brokerUrlInvalid: [{ url: 'localhost:3000', example: 'http://localhost:3000' }],
  hostInvalid: [{ problem: 'Enter a host name or IP address such as localhost (got "a/b")' }],
  portInUse: [{ port: 8080 }],
  presetUnreadable: [{ file: 'github.json', reason: 'ENOENT' }],
  presetInvalid: [{ file: 'github.json', field: 'api.url', problem: 'Invalid url' }],
  hashCheckNeedsHash: [],
  captureWithCallback: [],
  captureSigningFlow: [],
  unknownFlowPreset: [{ flow: 'oauth3', known: ['oauth1-1', 'oauth2-3'], suggestion: 'oauth2-3' }],
  fieldPairInvalid: [{ pair: 'client_id' }],
  flowNotNamed: [{ known: ['oauth1-1', 'oauth2-3'] }],
  recordFileUnreadable: [{ file: 'record.json', reason: 'ENOENT' }],
  recordFileNotJson: [{ file: 'record.json', reason: 'Unexpected end of JSON input' }],
  recordFileNotObject: [{ file: 'record.json' }],
  dashboardNeedsTty: [],
  attachNeedsAdminKey: [],
  noAdminApi: [{ url: 'http://localhost:3000' }],
  adminKeyRefused: [{ url: 'http://localhost:3000' }],
  unsupportedMediaType: [],
  bodyTooLarge: [],
  unknownHash: [],
  callbackWithoutState: [],
  stateNotIssued: [],
  noFlowWaits: [],
  wrongRedirect: [],
  unknownResult: [],
  pluginMissing: [{ plugin: 'oauth_9_3-legged' }],
  pluginLoadFailed: [{ plugin: 'custom', reason: "Cannot find module 'x' imported from custom.js" }],
  pluginWithoutStart: [{ plugin: 'custom' }],
  callbackNotAllowed: [{ callback: 'https://evil.example/cb' }],
  callbackNotLoopback: [{ callback: 'https://app.example/cb' }],
  deliveryNotAllowed: [{ mode: 'query', allowed: ['code', 'form_post'] }],
  flowStarted: [],
  flowFinished: [{ progress: 'completed' }],
  cookieMismatch: [],
  providerFailedAtStore: [{ message: 'Discovery for https://id.example failed: it answered 404' }],
  providerTimeoutAtStore: [{ message: 'https://id.example did not answer within 10000 ms' }],
  providerRefusedAtStore: [{ message: 'http://id.internal is not a provider this broker calls.' }],
  storeNotAnswering: [],
  storeFailingOver: [],
  startBeingUndone: [],
  redisUnreachable: [{ store: 'redis 127.0.0.1:6379', reason: 'connect ECONNREFUSED 127.0.0.1:6379' }],
  apiKeyInvalid: [],
  apiKeyRequired: [],
  adminKeyRequired: [],
  apiKeyRefusedByBroker: [{ message: 'The API key is not valid.' }],
  noRoute: [{ method: 'GET', path: '/nope' }],
  secretNotKept: [{ where: 'the OS keychain', id: 'client-1', broker: 'http://localhost:3000' }],
  brokerUnreachable: [{ url: 'http://localhost:3000', cause: 'ECONNREFUSED' }],
  workerStartFailed: [{ reason: 'listen EADDRINUSE: address already in use :::3000' }],
  workerExited: [{ how: 'code 1' }],
  notABroker: [{ url: 'http://localhost:3000', status: 200 }],
  brokerAnswered: [{ status: 502 }],
  adminAnswered: [{ url: 'http://localhost:3000', status: 500 }],
  dashboardCannotListen: [{ listen: '127.0.0.1', port: 3000, reason: 'EADDRINUSE' }],
  flowFailed: [{ error: 'access_denied', description: 'The user declined' }],
  flowEndedEarly: [{ reason: 'stopped after 10 hops', hash: 'h1' }],
  providerAppFailed: [{ message: 'The API answered 401.' }],
  secretsFileUnreadable: [{ file: 'secrets.json', reason: 'Unexpected token' }],
  secretsFileNotObject: [{ file: 'secrets.json' }],
  secretsFileUnwritable: [{ file: 'secrets.json', reason: 'EACCES' }],
  unexpected: [],
  unexpectedInCli: [{ firstLine: "Couldn't access platform storage" }],
  flowExists: [],
  fixtureInvalid: [
    { message: 'hello.json: request.method must be a string', file: 'hello.json', path: 'request.method' },
  ],
  fixtureUnreadable: [{ message: 'nope.json: $: cannot be read (ENOENT)', file: 'nope.json', path: '$' }],
  pluginConfigInvalid: [
    {
      message: 'lua.json: $.plugins[0].config.message: expected a string',
      file: 'lua.json',
      path: '$.plugins[0].config.message',
    },
  ],
  luaModuleUnsupported: [
    {
      message: 'lua.json: $.plugins[0].module: requires "resty.openssl.x509"',
      file: 'lua.json',
      path: '$.plugins[0].module',
    },
  ],
  luaModuleNotFound: [
    { message: 'lua.json: $.plugins[0].module: requires "luatz"', file: 'lua.json', path: '$.plugins[0].module' },
  ],
  luaSyntax: [
    {
      message:
        "lua.json: $.plugins[0].module: does not parse: kong/plugins/x/handler.lua:3: unexpected symbol near ')'",
      file: 'lua.json',
      path: '$.plugins[0].module',
    },
  ],
  luaNgxUnsupported: [
    {
      message:
        'lua.json: $.plugins[0].module: calls ngx.socket.tcp() of "ngx.socket", which broker does not emulate (sockets are not emulated, a replay opens no connection)',
      file: 'lua.json',
      path: '$.plugins[0].module',
    },
  ],
  luaSyntaxLibrary: [
    {
      message:
        "lua.json: $.plugins[0].module: does not parse: old.lua:3: unexpected symbol near ')' (a library's file, required by kong.plugins.x.handler)",
      file: 'lua.json',
      path: '$.plugins[0].module',
    },
  ],
  luajitSyntax: [
    {
      message: "lua.json: $.plugins[0].module: does not parse: handler.lua:3: malformed number near '12i'",
      file: 'lua.json',
      path: '$.plugins[0].module',
    },
  ],
  outboundUnmatched: [
    {
      message: 'lua.json: $.outbound: resty.http.request_uri(GET https://auth.example/) matches no entry of "outbound"',
      file: 'lua.json',
      path: '$.outbound',
    },
  ],
  missingFields: [
    {
      missing: [
        { field: 'client_id', flag: '--client-id' },
        { field: 'client_secret', flag: '--client-secret' },
      ],
    },
  ],
  captureTimeout: [{ seconds: 300, port: 43210 }],
  captureLoginTimeout: [{ port: 43210 }],
  captureNotDelivered: [{ progress: 'completed', port: 43210 }],
  deviceTimeout: [{ seconds: 600 }],
  unknownProvider: [{ name: 'githb', known: ['github', 'google'], suggestion: 'github' }],
  cancelled: [{ field: 'client_secret' }],
  keychainRefused: [{ action: 'save', id: 'client-1', reason: 'no default collection' }],
  noKeychain: [{ reason: 'no Secret Service' }],
  providerNotAllowed: [{ field: 'access_url', origin: 'https://evil.example' }],
  providerAddressNotAllowed: [{ field: 'access_url', origin: 'http://10.0.0.5' }],
  providerAddressForbidden: [{ field: 'access_url', origin: 'http://169.254.169.254' }],
  providerRefused: [{ origin: 'http://internal.example' }],
  providerUrlInvalid: [],
  exchangeInterrupted: [],
  resultNotKept: [],
  storeAnswerUnexpected: [{ url: 'http://localhost:3000' }],
  urlTooLong: [{ length: 9000, max: 8192 }],
  requestTokenTaken: [],
  noFixtureFound: [{ path: 'fixtures/pdk/empty' }],
  specPathNotFound: [{ message: 'spec/missing does not exist in the current folder', path: 'spec/missing' }],
  specNoneFound: [{ message: 'No spec file in spec: none of its .lua files matches the pattern _spec', path: 'spec' }],
  bustedInvalid: [
    { message: '.busted must return a table of tasks ({ default = { … } })', path: '/home/me/kong-plugin/.busted' },
  ],
  shippedFixtureUnknown: [
    { name: 'js-helo', folder: 'node_modules/oauth-broker/fixtures/pdk', suggestion: 'js-hello' },
  ],
  crossSite: [{ path: '/store' }],
  requestTimeout: [{ ms: 30_000 }],
  shuttingDown: [],
  headersTooLarge: [],
  rateLimited: [{ max: 30, windowMs: 60_000, after: '1 minute', ttlMs: 42_500 }],
}

const IDS = Object.keys(MESSAGES) as MessageId[]
const make = brokerError as (id: MessageId, ...values: unknown[]) => BrokerError
const rendered = (id: MessageId) => make(id, ...SAMPLES[id])

// A stack frame ("    at f (file:1:2)") or Node's "Error: …" prefix; an absolute file-system path (not an HTTP route).
const STACK = /\n\s+at \S|\bError: /
const ABSOLUTE_PATH =
  /(?:^|[\s'"(`])(?:file:\/\/|\/(?:home|Users|root|tmp|var|srv|usr|etc|opt|private|mnt)\/|[A-Za-z]:\\)/

describe('MESSAGES', () => {
  it.each(IDS)('%s belongs to a code in ERRORS', (id) => {
    expect(ERRORS).toHaveProperty(MESSAGES[id].code)
    expect(rendered(id).code).toBe(MESSAGES[id].code)
  })

  it.each(IDS)('%s renders one sentence for sample values', (id) => {
    const { message } = rendered(id)
    expect(message.trim()).not.toBe('')
    expect(message).toBe(message.trim())
    expect(message).not.toMatch(/undefined|null|NaN|\[object /)
    expect(message).not.toMatch(STACK)
    expect(message).not.toMatch(ABSOLUTE_PATH)
  })

  it('has one id per distinct message', () => {
    const seen = new Map<string, MessageId>()
    for (const id of IDS) {
      const { message } = rendered(id)
      expect(seen.get(message), `${id} repeats ${seen.get(message)}`).toBeUndefined()
      seen.set(message, id)
    }
  })
})

describe('brokerError', () => {
  it("takes status, exit code and next step from the message's code", () => {
    const err = brokerError('unknownHash')
    expect(err).toBeInstanceOf(BrokerError)
    expect(err).toMatchObject({ code: 'UNKNOWN_HASH', status: 404, exit: 1, next: ERRORS.UNKNOWN_HASH.next })
    expect(err.message).toBe('No flow is stored under this hash: it expired or never existed.')
  })

  it('fills a template and its details from the same values', () => {
    expect(brokerError('pluginMissing', { plugin: 'x' }).toJSON()).toEqual({
      code: 'FLOW_PLUGIN_MISSING',
      message: 'No flow plugin named "x".',
      plugin: 'x',
    })
    expect(brokerError('hashRequired').toJSON()).toEqual({
      code: 'VALIDATION',
      message: 'The hash query parameter is required.',
      fields: { hash: 'is required' },
    })
  })
})

describe('next steps', () => {
  // The CLI shows them: a CLI user runs `broker …`, not an HTTP request, and docs that exist (docs/ ships in the package).
  // CROSS_SITE only ever answers a web page's request, so its next step is about HTTP calls.
  const httpOnly = new Set(['CROSS_SITE', 'crossSite'])
  const nexts = [
    ...Object.entries(ERRORS).map(([code, spec]) => [code, (spec as { next?: string }).next] as const),
    ...IDS.map((id) => [id, rendered(id).next] as const),
  ].filter((entry): entry is readonly [string, string] => Boolean(entry[1]) && !httpOnly.has(entry[0]))

  it.each(nexts)('%s names no HTTP request and no docs/ page that does not exist', (_, next) => {
    expect(next).not.toMatch(/\b(GET|POST|PUT|DELETE) \//)
    for (const [page] of next.matchAll(/docs\/[\w/-]+\.md/g))
      expect(existsSync(new URL(`../../${page}`, import.meta.url))).toBe(true)
  })

  it('points a provider failure at what the user gave, not at a stored record (discovery fails before anything is stored)', () => {
    expect(ERRORS.PROVIDER_ERROR.next).not.toMatch(/stored record/)
    expect(ERRORS.PROVIDER_ERROR.next).toMatch(/issuer/)
  })

  it('a message can have its own next step: an unreadable fixture is no field to fix', () => {
    expect(brokerError('fixtureUnreadable', { message: 'm', file: 'f', path: '$' }).next).toMatch(/broker pdk run/)
    expect(brokerError('fixtureInvalid', { message: 'm', file: 'f', path: '$' }).next).toMatch(/Fix the field/)
  })
})

describe('fromBrokerAnswer', () => {
  it("rebuilds a broker's JSON answer as the same error", () => {
    const { code, message, ...details } = brokerError('invalidRecord', { fields: { a: 'is required' } }).toJSON()
    const again = fromBrokerAnswer(code, message, details)
    expect(again.toJSON()).toEqual({ code, message, ...details })
    expect(again.exit).toBe(2)
  })
})

describe('the registry by audience', () => {
  it('has no message id in two parts (a spread would silently keep only one)', async () => {
    const { MESSAGE_COUNT } = await import('./index.js')
    expect(Object.keys(MESSAGES)).toHaveLength(MESSAGE_COUNT)
  })

  it('gives an HTTP status to the HTTP codes only', async () => {
    const [{ HTTP_ERRORS }, { CLI_ERRORS }, { CONFIG_ERRORS }, { PDK_ERRORS }] = await Promise.all([
      import('./http.js'),
      import('./cli.js'),
      import('./config.js'),
      import('./pdk.js'),
    ])
    for (const spec of Object.values(HTTP_ERRORS)) expect(spec.status).toBeGreaterThanOrEqual(400)
    for (const part of [CLI_ERRORS, CONFIG_ERRORS, PDK_ERRORS])
      for (const spec of Object.values(part)) expect(spec).not.toHaveProperty('status')
  })
})
