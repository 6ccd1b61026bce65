import { describe, expect, it } from 'vitest'
import { grpcurlOutput } from './call.js'
import { GrpcurlNotEmulated, parseGrpcurl, shellWords, type GrpcCall } from './grpcurl.js'

const PROTO = '-proto ./spec/fixtures/grpc/hello.proto'
const call = (opts: string, service = 'hello.HelloService.SayHello') =>
  parseGrpcurl(`-plaintext ${PROTO} ${opts}`, '127.0.0.1:9002', service)

describe("grpcurl's command line as Kong's helper writes it", () => {
  it('splits words as the shell does: quotes group, a backslash escapes', () => {
    expect(shellWords(`-H 'Date: Mon, 01' -H "a: \\"b\\"" -d '{"greeting":"x y"}' x\\ y`)).toEqual([
      '-H',
      'Date: Mon, 01',
      '-H',
      'a: "b"',
      '-d',
      '{"greeting":"x y"}',
      'x y',
    ])
  })

  it('reads the flags that shape the call; -H twice is two metadata entries', () => {
    const c = call(`-v -authority a.test -user-agent 'UA 1' -H 'X-One: 1' -H 'x-two:2' -d '{"greeting":"g"}'`)
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 9002,
      tls: false,
      authority: 'a.test',
      userAgent: 'UA 1',
      verbosity: 1,
      messages: [{ greeting: 'g' }],
      metadata: [
        ['x-one', '1'],
        ['x-two', '2'],
      ],
    })
  })

  it('refuses as grpcurl does: an unknown flag, too many messages for a unary method, an unknown symbol', () => {
    expect(call('-nope')).toEqual({
      ok: false,
      output: "flag provided but not defined: -nope\nTry 'grpcurl -help' for more details.\n",
    })
    expect(call(`-d '{"greeting":"a"}{"greeting":"b"}'`)).toMatchObject({
      ok: false,
      output: expect.stringContaining('is a unary RPC, but request data contained more than 1 message'),
    })
    expect(call('', 'hello.Nope.X')).toEqual({
      ok: false,
      output: 'Failed to resolve symbol "hello.Nope.X": Symbol not found: hello.Nope.X\n',
    })
    expect(parseGrpcurl(`-plaintext -insecure ${PROTO}`, 'h:1', 'hello.HelloService.SayHello')).toMatchObject({
      output: expect.stringContaining('The -insecure argument can only be used with TLS.'),
    })
  })

  it("knows no flag by a name JavaScript objects carry (-toString, -constructor): grpcurl's usage error", () => {
    for (const name of ['toString', 'constructor', '__proto__'])
      expect(call(`-${name} x`)).toEqual({
        ok: false,
        output: `flag provided but not defined: -${name}\nTry 'grpcurl -help' for more details.\n`,
      })
  })

  it('names what broker does not emulate: another proto, reflection, -format text', () => {
    expect(() => parseGrpcurl('-plaintext -proto other.proto', 'h:1', 'a.B.C')).toThrow(GrpcurlNotEmulated)
    expect(() => parseGrpcurl('-plaintext', 'h:1', 'a.B.C')).toThrow(/reflection/)
    expect(() => call('-format text')).toThrow(/-format text is not emulated/)
  })
})

describe('what grpcurl prints of an answer', () => {
  const c = call('') as GrpcCall
  it('a gRPC content type: grpc-status decides, whatever the HTTP status; the message percent-decoded', () => {
    const out = grpcurlOutput(c, {
      status: 401,
      headers: { 'Content-Type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'no%20key' },
      body: Buffer.alloc(0),
    })
    expect(out).toEqual({ ok: false, output: 'ERROR:\n  Code: Unauthenticated\n  Message: no key\n' })
  })

  it('another content type: grpc-go falls back to the HTTP status', () => {
    const out = grpcurlOutput(c, { status: 404, headers: { 'content-type': 'text/html' }, body: Buffer.alloc(0) })
    expect(out.output).toBe(
      'ERROR:\n  Code: Unimplemented\n  Message: Not Found: HTTP status code 404; transport: received the unexpected content-type "text/html"\n',
    )
  })
})
