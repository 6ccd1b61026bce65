/**
 * The gRPC messages Kong's plugin specs exchange, as bytes: the services of Kong's test proto
 * (spec/fixtures/grpc/hello.proto, the one `proxy_client_grpc` hands grpcurl) described as data,
 * protobuf's encoding of their string fields, and gRPC's length-prefixed framing of messages.
 */

/** A message type: its fields by JSON name, each a string with its field number (all hello.proto has). */
export interface MessageType {
  name: string
  fields: ReadonlyArray<{ name: string; number: number; required?: boolean }>
}

export interface MethodType {
  service: string
  name: string
  input: MessageType
  output: MessageType
  clientStreaming: boolean
  serverStreaming: boolean
}

const HELLO_REQUEST: MessageType = { name: 'hello.HelloRequest', fields: [{ name: 'greeting', number: 1 }] }
const HELLO_RESPONSE: MessageType = {
  name: 'hello.HelloResponse',
  fields: [{ name: 'reply', number: 1, required: true }],
}

const hello = (name: string, clientStreaming: boolean, serverStreaming: boolean): MethodType => ({
  service: 'hello.HelloService',
  name,
  input: HELLO_REQUEST,
  output: HELLO_RESPONSE,
  clientStreaming,
  serverStreaming,
})

/** hello.proto's methods, by their full name (`hello.HelloService.SayHello`). */
export const METHODS: ReadonlyMap<string, MethodType> = new Map(
  [
    hello('SayHello', false, false),
    hello('LotsOfReplies', false, true),
    hello('LotsOfGreetings', true, false),
    hello('BidiHello', true, true),
  ].map((m) => [`${m.service}.${m.name}`, m]),
)

/** The method a symbol names, written `pkg.Service.Method` or `pkg.Service/Method` (grpcurl takes both). */
export function methodOf(symbol: string): MethodType | undefined {
  return METHODS.get(symbol.replace(/^\./, '').replace('/', '.'))
}

/** A message of string fields as protobuf encodes it: tag, length, UTF-8 bytes per field. */
export function encodeMessage(type: MessageType, value: Record<string, string>): Buffer {
  const parts: Buffer[] = []
  for (const f of type.fields) {
    const v = value[f.name]
    if (v === undefined) continue
    const bytes = Buffer.from(v, 'utf8')
    parts.push(varint((f.number << 3) | 2), varint(bytes.length), bytes)
  }
  return Buffer.concat(parts)
}

/** A protobuf message back into its string fields; fields it does not know are skipped, as protobuf does. */
export function decodeMessage(type: MessageType, bytes: Buffer): Record<string, string> {
  const out: Record<string, string> = {}
  let at = 0
  const read = (): number => {
    let n = 0
    let shift = 0
    for (;;) {
      if (at >= bytes.length) throw new Error('truncated message')
      const b = bytes[at++]!
      n += (b & 0x7f) * 2 ** shift
      if (b < 0x80) return n
      shift += 7
    }
  }
  while (at < bytes.length) {
    const key = read()
    const wire = key & 7
    if (wire === 0) read()
    else if (wire === 1 || wire === 5) at += wire === 1 ? 8 : 4
    else if (wire === 2) {
      const len = read()
      if (at + len > bytes.length) throw new Error('truncated message')
      const field = type.fields.find((f) => f.number === Math.floor(key / 8))
      if (field) out[field.name] = bytes.subarray(at, at + len).toString('utf8')
      at += len
    } else throw new Error(`unsupported wire type ${wire}`)
  }
  return out
}

/** Messages in gRPC's framing: a compression flag (0) and a 4-byte length before each. */
export function frame(messages: readonly Buffer[]): Buffer {
  return Buffer.concat(
    messages.flatMap((m) => {
      const head = Buffer.alloc(5)
      head.writeUInt32BE(m.length, 1)
      return [head, m]
    }),
  )
}

/** The messages of a gRPC body, or an error naming what is wrong with its framing. */
export function unframe(body: Buffer): Buffer[] | Error {
  const out: Buffer[] = []
  let at = 0
  while (at < body.length) {
    if (at + 5 > body.length) return new Error(`a message frame cut short (${body.length - at} bytes)`)
    if (body[at] !== 0) return new Error('a compressed message (compression is not emulated)')
    const len = body.readUInt32BE(at + 1)
    if (at + 5 + len > body.length) return new Error('a message frame cut short')
    out.push(body.subarray(at + 5, at + 5 + len))
    at += 5 + len
  }
  return out
}

function varint(n: number): Buffer {
  const bytes: number[] = []
  while (n >= 0x80) {
    bytes.push((n & 0x7f) | 0x80)
    n = Math.floor(n / 128)
  }
  bytes.push(n)
  return Buffer.from(bytes)
}
