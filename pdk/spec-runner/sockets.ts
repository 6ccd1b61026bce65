/**
 * Real TCP (and TLS) sockets for Lua code that calls them synchronously, as cosockets look from Lua
 * (ngx.socket.tcp, which broker's resty.redis uses in `pdk test`): the sockets live in a worker
 * thread, and each call blocks the VM's thread on Atomics.wait until the worker answers through a
 * MessagePort read with receiveMessageOnPort. A call from a spec's own line, a plugin's phase or a
 * timer is the same call: no coroutine has to yield to the host.
 */
import { SERVERS_WORKER } from './servers.js'
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads'

/** What the worker answers: values, or `error` (Lua's `nil, err`) with what was read before it. */
export interface SocketAnswer {
  error?: string
  partial?: Uint8Array
  [key: string]: unknown
}

// plain JS (eval'd: it runs the same from the sources and from dist/); one state per socket
const WORKER = `
const { workerData } = require('node:worker_threads')
const net = require('node:net'), tls = require('node:tls'), fs = require('node:fs')
const { port, flag } = workerData
const signal = new Int32Array(flag)
const socks = new Map()
let next = 1
function reply(msg) {
  port.postMessage(msg)
  Atomics.store(signal, 0, 1)
  Atomics.notify(signal, 0)
}
function attach(s, sock) {
  s.sock = sock
  sock.on('data', (d) => { s.buf = Buffer.concat([s.buf, d]); wake(s) })
  sock.on('error', (e) => { s.err = s.err || e.code || e.message; wake(s) })
  sock.on('close', () => { s.closed = true; wake(s) })
}
function wake(s) { const w = s.waiter; s.waiter = undefined; if (w) w() }
function wait(s, ms) {
  return new Promise((resolve) => {
    const t = setTimeout(() => { s.waiter = undefined; resolve(false) }, ms)
    s.waiter = () => { clearTimeout(t); resolve(true) }
  })
}
// nginx's words for what went wrong
const words = (code, host) => code === 'ECONNREFUSED' ? 'connection refused'
  : code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? host + ' could not be resolved (3: Host not found)'
  : String(code || 'closed')
function connect(req) {
  return new Promise((resolve) => {
    const s = { buf: Buffer.alloc(0), closed: false }
    const sock = net.connect({ host: req.host, port: req.port })
    const t = setTimeout(() => { sock.destroy(); resolve({ error: 'timeout' }) }, req.timeout)
    sock.once('error', (e) => { clearTimeout(t); resolve({ error: words(e.code, req.host) }) })
    sock.once('connect', () => {
      clearTimeout(t)
      sock.removeAllListeners('error')
      const id = next++
      attach(s, sock)
      socks.set(id, s)
      resolve({ id })
    })
  })
}
function handshake(s, req) {
  return new Promise((resolve) => {
    const raw = s.sock
    raw.removeAllListeners('data'); raw.removeAllListeners('close'); raw.removeAllListeners('error')
    const opts = { socket: raw, rejectUnauthorized: !!req.verify }
    if (req.server_name && net.isIP(req.server_name) === 0) opts.servername = req.server_name
    if (req.ca) opts.ca = fs.readFileSync(req.ca)
    if (!req.server_name) opts.checkServerIdentity = () => undefined
    const sock = tls.connect(opts)
    const t = setTimeout(() => { sock.destroy(); resolve({ error: 'timeout' }) }, req.timeout)
    sock.once('error', (e) => {
      clearTimeout(t)
      const verify = /CERT|SIGNATURE|VERIFY|ALTNAME/.test(String(e.code))
      resolve({ error: (verify ? 'certificate verify failed: ' : 'handshake failed: ') + e.message })
    })
    sock.once('secureConnect', () => {
      clearTimeout(t)
      sock.removeAllListeners('error')
      attach(s, sock)
      resolve({ ok: true })
    })
  })
}
async function receive(s, req) {
  const deadline = Date.now() + req.timeout
  for (;;) {
    if (req.pattern === '*l') {
      const i = s.buf.indexOf(10)
      if (i >= 0) {
        let line = s.buf.subarray(0, i)
        s.buf = s.buf.subarray(i + 1)
        if (line.length && line[line.length - 1] === 13) line = line.subarray(0, line.length - 1)
        return { data: line }
      }
    } else if (req.pattern === '*a') {
      if (s.closed) { const data = s.buf; s.buf = Buffer.alloc(0); return { data } }
    } else if (s.buf.length >= req.pattern) {
      const data = s.buf.subarray(0, req.pattern)
      s.buf = s.buf.subarray(req.pattern)
      return { data }
    }
    if (s.closed || s.err) { const partial = s.buf; s.buf = Buffer.alloc(0); return { error: 'closed', partial } }
    const left = deadline - Date.now()
    if (left <= 0 || !(await wait(s, left))) return { error: 'timeout', partial: Buffer.alloc(0) }
  }
}
async function handle(req) {
  if (req.op === 'connect') return connect(req)
  if (serverOps[req.op]) return serverOps[req.op](req)
  if (req.op === 'free_port') {
    return new Promise((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => { const p = srv.address().port; srv.close(() => resolve({ port: p })) })
    })
  }
  const s = socks.get(req.id)
  if (!s) return { error: 'closed' }
  if (s.udp) return udpOp(s, req)
  if (req.op === 'sslhandshake') return handshake(s, req)
  if (req.op === 'send') {
    if (s.closed || s.err) return { error: 'closed' }
    return new Promise((resolve) => s.sock.write(Buffer.from(req.data), (e) => resolve(e ? { error: 'closed' } : { bytes: req.data.length })))
  }
  if (req.op === 'receive') return receive(s, req)
  if (req.op === 'idle') return { idle: !s.closed && !s.peerGone && !s.err && s.buf.length === 0 }
  if (req.op === 'close') { socks.delete(req.id); s.sock.destroy(); return { ok: true } }
  return { error: 'unknown socket operation ' + req.op }
}
port.on('message', (req) => { handle(req).then(reply, (e) => reply({ error: String((e && e.message) || e) })) })
${SERVERS_WORKER}`

/** The worker holding the sockets, started on the first call; `close()` ends it and every socket. */
export class SyncSockets {
  private worker: Worker | undefined
  private port: MessagePort | undefined
  private signal: Int32Array | undefined

  /** One socket operation, answered synchronously; `timeoutMs` bounds the wait (the worker's own comes first). */
  call(op: string, args: Record<string, unknown>, timeoutMs: number): SocketAnswer {
    const { port, signal } = this.start()
    Atomics.store(signal, 0, 0)
    port.postMessage({ op, ...args })
    // the worker times the operation out itself; this bound only catches a worker that died
    if (Atomics.wait(signal, 0, 0, timeoutMs + 5_000) === 'timed-out') return { error: 'timeout' }
    const got = receiveMessageOnPort(port)
    return (got?.message as SocketAnswer | undefined) ?? { error: 'closed' }
  }

  close(): void {
    this.port?.close()
    void this.worker?.terminate()
    this.worker = this.port = this.signal = undefined
  }

  private start(): { port: MessagePort; signal: Int32Array } {
    if (this.worker && this.port && this.signal) return { port: this.port, signal: this.signal }
    const { port1, port2 } = new MessageChannel()
    const flag = new SharedArrayBuffer(4)
    this.worker = new Worker(WORKER, { eval: true, workerData: { port: port2, flag }, transferList: [port2] })
    this.worker.unref()
    this.port = port1
    this.signal = new Int32Array(flag)
    return { port: this.port, signal: this.signal }
  }
}
