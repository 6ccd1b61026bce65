/**
 * grpcurl's command line as Kong's spec helper builds it (`bin/grpcurl <opts> host:port <service>`,
 * each option and its value joined by a space, quoted for the shell), read as grpcurl reads it: the
 * shell's words, then Go's flag rules. The flags that change the call are emulated; those that only
 * touch the wire (TLS files, timeouts) are accepted; the rest fail naming themselves.
 */
import { methodOf, type MethodType } from './proto.js'

/** One grpcurl invocation, ready to become a request. */
export interface GrpcCall {
  host: string
  port: number
  /** Not -plaintext: TLS (not on the wire here; the request's scheme is https). */
  tls: boolean
  symbol: string
  method: MethodType
  /** The request messages of -d, parsed. */
  messages: Array<Record<string, unknown>>
  /** -H and -rpc-header, names lowercased, in order. */
  metadata: Array<[string, string]>
  authority?: string
  userAgent?: string
  allowUnknownFields: boolean
  /** 0, 1 (-v) or 2 (-vv). */
  verbosity: number
}

/** What grpcurl prints and whether it exits 0, for a command line it refuses before calling. */
export interface GrpcurlExit {
  ok: false
  output: string
}

/** A flag broker does not emulate: the spec's line fails naming it. */
export class GrpcurlNotEmulated extends Error {}

// grpcurl's flags by what broker makes of them (`call`: emulated; `wire`: accepted, they only touch the wire;
// `refuse`: the spec's line fails naming the flag), then by how each takes its value
type Kind = 'bool' | 'value' | 'multi'
type Use = 'call' | 'wire' | 'refuse'
const BY_USE: Record<Use, Record<Kind, string[]>> = {
  call: {
    bool: ['plaintext', 'v', 'vv', 'allow-unknown-fields'],
    value: ['d', 'authority', 'user-agent', 'format'],
    multi: ['proto', 'H', 'rpc-header'],
  },
  wire: {
    bool: ['insecure', 'emit-defaults'],
    value: ['cacert', 'cert', 'key', 'servername', 'connect-timeout', 'keepalive-time', 'max-time', 'max-msg-sz'],
    multi: ['reflect-header', 'import-path'],
  },
  refuse: {
    bool: ['help', 'version', 'alts', 'unix', 'expand-headers', 'format-error', 'msg-template', 'use-reflection'],
    value: ['alts-handshaker-service', 'protoset-out', 'proto-out-dir'],
    multi: ['alts-target-service-account', 'protoset'],
  },
}
// A Map, not an object: a flag named as an object's own property (-toString) is unknown, as it is to grpcurl.
const FLAGS = new Map(
  (Object.keys(BY_USE) as Use[]).flatMap((use) =>
    (Object.keys(BY_USE[use]) as Kind[]).flatMap((kind) =>
      BY_USE[use][kind].map((name) => [name, { kind, use }] as const),
    ),
  ),
)

/** What grpcurl prints when it refuses a command line before calling, and its exit (not 0). */
const refused = (output: string): GrpcurlExit => ({ ok: false, output })
const usage = (message: string): GrpcurlExit => refused(`${message}\nTry 'grpcurl -help' for more details.\n`)

/** The shell's words of a command line: spaces split, quotes group, a backslash escapes. */
export function shellWords(line: string): string[] {
  const words: string[] = []
  let word: string | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end < 0) throw new GrpcurlNotEmulated(`an unterminated ' in grpcurl's options: ${line}`)
      word = (word ?? '') + line.slice(i + 1, end)
      i = end
    } else if (c === '"') {
      let s = ''
      for (i++; i < line.length && line[i] !== '"'; i++)
        s += line[i] === '\\' && '"\\$`'.includes(line[i + 1] ?? '') ? line[++i] : line[i]
      if (i >= line.length) throw new GrpcurlNotEmulated(`an unterminated " in grpcurl's options: ${line}`)
      word = (word ?? '') + s
    } else if (c === '\\' && i + 1 < line.length) word = (word ?? '') + line[++i]
    else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word)
      word = undefined
    } else word = (word ?? '') + c
  }
  if (word !== undefined) words.push(word)
  return words
}

/** grpcurl's reading of `bin/grpcurl <opts> <target> <service>`: the call, or what it prints when it refuses. */
export function parseGrpcurl(opts: string, target: string, service: string): GrpcCall | GrpcurlExit {
  const args = [...shellWords(opts), ...shellWords(target), ...shellWords(service)]
  const single = new Map<string, string>()
  const multi = new Map<string, string[]>()
  let i = 0
  for (; i < args.length; i++) {
    const a = args[i]!
    if (a === '--') {
      i++
      break
    }
    if (!a.startsWith('-') || a === '-') break
    const body = a.replace(/^--?/, '')
    const eq = body.indexOf('=')
    const name = eq < 0 ? body : body.slice(0, eq)
    const flag = FLAGS.get(name)
    if (!flag) return usage(`flag provided but not defined: -${name}`)
    if (flag.use === 'refuse') throw new GrpcurlNotEmulated(`grpcurl's -${name} is not emulated by broker`)
    let value: string
    if (eq >= 0) value = body.slice(eq + 1)
    else if (flag.kind === 'bool') value = 'true'
    else if (i + 1 < args.length) value = args[++i]!
    else return usage(`flag needs an argument: -${name}`)
    if (flag.kind === 'bool' && !/^(1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$/.test(value))
      return usage(`invalid boolean value "${value}" for -${name}: parse error`)
    if (flag.kind === 'multi') multi.set(name, [...(multi.get(name) ?? []), value])
    else single.set(name, value)
  }
  const on = (name: string) => /^(1|t|T|TRUE|true|True)$/.test(single.get(name) ?? '')
  const rest = args.slice(i)
  if (on('plaintext') && on('insecure')) return usage('The -insecure argument can only be used with TLS.')
  const format = single.get('format') ?? 'json'
  if (format !== 'json' && format !== 'text') return usage("The -format option must be 'json' or 'text'.")
  if (format === 'text') throw new GrpcurlNotEmulated("grpcurl's -format text is not emulated by broker (json is)")
  if (rest.length < 2) return usage(rest.length === 0 ? 'No host:port specified.' : 'Too few arguments.')
  if (rest[1] === 'list' || rest[1] === 'describe')
    throw new GrpcurlNotEmulated(`grpcurl ${rest[1]} is not emulated by broker (calling a method is)`)
  if (rest.length > 2) return usage('Too many arguments.')
  const [address, symbol] = rest as [string, string]
  const protos = multi.get('proto') ?? []
  if (!protos.length)
    throw new GrpcurlNotEmulated('grpcurl without -proto (server reflection) is not emulated by broker')
  const other = protos.find((p) => !/(^|\/)hello\.proto$/.test(p))
  if (other)
    throw new GrpcurlNotEmulated(
      `grpcurl -proto ${other}: only Kong's spec/fixtures/grpc/hello.proto is emulated by broker`,
    )
  const method = methodOf(symbol)
  if (!method) return refused(`Failed to resolve symbol "${symbol}": Symbol not found: ${symbol}\n`)
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(address)
  if (!m) return refused(`Failed to dial target host "${address}": missing port in address\n`)
  const messages = requestMessages(single.get('d') ?? '')
  if (messages instanceof Error)
    return refused(`Error invoking method "${symbol}": error getting request data: ${messages.message}\n`)
  if (!method.clientStreaming && messages.length > 1)
    return refused(
      `Error invoking method "${symbol}": method "${method.service}.${method.name}" is a unary RPC, but request data contained more than 1 message\n`,
    )
  return {
    host: m[1]!,
    port: Number(m[2]),
    tls: !on('plaintext'),
    symbol,
    method,
    messages,
    metadata: [...(multi.get('H') ?? []), ...(multi.get('rpc-header') ?? [])].map(metadataPair),
    authority: single.get('authority') || undefined,
    userAgent: single.get('user-agent') || undefined,
    allowUnknownFields: on('allow-unknown-fields'),
    verbosity: on('vv') ? 2 : on('v') ? 1 : 0,
  }
}

/** `name: value` as grpcurl reads a header: the name lowercased, both trimmed. */
function metadataPair(h: string): [string, string] {
  const colon = h.indexOf(':')
  const name = (colon < 0 ? h : h.slice(0, colon)).trim().toLowerCase()
  return [name, colon < 0 ? '' : h.slice(colon + 1).trim()]
}

/** -d's JSON messages, one after another (whitespace between them or none), or the error reading them. */
function requestMessages(data: string): Array<Record<string, unknown>> | Error {
  if (data === '@') return new Error('reading request data from stdin (-d @) is not emulated by broker')
  const out: Array<Record<string, unknown>> = []
  let at = 0
  for (;;) {
    while (at < data.length && /\s/.test(data[at]!)) at++
    if (at >= data.length) return out
    const end = valueEnd(data, at)
    let v: unknown
    try {
      v = JSON.parse(data.slice(at, end))
    } catch (e) {
      return new Error((e as Error).message)
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) return new Error(`not a JSON object: ${data.slice(at, end)}`)
    out.push(v as Record<string, unknown>)
    at = end
  }
}

/** Where the JSON value starting at `at` ends: its closing bracket, or the next space or bracket. */
function valueEnd(s: string, at: number): number {
  let depth = 0
  for (let i = at; i < s.length; i++) {
    const c = s[i]!
    if (c === '"') {
      for (i++; i < s.length && s[i] !== '"'; i++) if (s[i] === '\\') i++
      if (depth === 0) return i + 1
    } else if (c === '{' || c === '[') depth++
    else if (c === '}' || c === ']') {
      depth--
      if (depth <= 0) return i + 1
    } else if (depth === 0 && /[\s{[]/.test(c) && i > at) return i
  }
  return s.length
}
