/**
 * The worker's half of what a spec reaches on loopback besides TCP clients (sockets.ts runs it): UDP
 * sockets for ngx.socket.udp, and the spec-side servers of spec.helpers (tcp_server, udp_server) that
 * a logging plugin sends to. A server runs in the worker's event loop, so it keeps accepting while the
 * VM's thread goes on with the spec; `join` blocks the VM until the server has what it waited for.
 */

// plain JS, appended to sockets.ts's worker script (it uses that script's `words`, and `tls`/`fs`)
export const SERVERS_WORKER = `
const dgram = require('node:dgram')
const servers = new Map()
let nextServer = 1
// a server ends once; join answers with its result, or { pending: true } after the wait given
function finish(srv, result) { if (!srv.result) { srv.result = result; srv.close(); for (const w of srv.waiters.splice(0)) w() } }
function listenTcp(server, port) {
  return new Promise((resolve) => {
    const tryHost = (hosts) => {
      server.once('error', (e) => hosts.length > 1 && e.code !== 'EADDRINUSE' ? tryHost(hosts.slice(1)) : resolve({ error: e.code === 'EADDRINUSE' ? 'address already in use' : String(e.code || e.message) }))
      server.listen({ port, host: hosts[0], ipv6Only: false }, () => { server.removeAllListeners('error'); resolve({}) })
    }
    tryHost(['::', '0.0.0.0'])
  })
}
// a connection this server closes is marked at once on the client socket at its other end, so a kept
// connection to it is not taken again (the close would otherwise reach the client a turn later)
function peerGone(c) {
  for (const s of socks.values()) if (s.sock && s.sock.localPort === c.remotePort && s.sock.remotePort === c.localPort) s.peerGone = true
}
// a server of an earlier test nobody joined gives its port up to the next one, ending with 'timeout'
// (Kong's thread would hold the port until its own timeout, failing every test in between)
async function freePort(port) {
  for (const srv of servers.values()) if (srv.port === port && !srv.result) { finish(srv, srv.timedOut()); await srv.closed }
}
async function tcpServe(req) {
  await freePort(req.port)
  const srv = { waiters: [], oks: 0, fails: 0, served: 0, line: undefined, port: req.port }
  const onConnection = (c) => {
    let buf = Buffer.alloc(0), done = false
    const end = (line) => {
      if (done) return
      done = true
      if (line === undefined) srv.fails++
      else if (line === '@DIE@') { c.end(srv.oks + ':' + srv.fails + '\\n'); peerGone(c); return finish(srv, { data: srv.line }) }
      else { srv.oks++; srv.line = line; c.end((req.prefix || '') + line + '\\n'); peerGone(c) }
      if (++srv.served >= srv.requests) finish(srv, { data: srv.line })
    }
    c.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      const i = buf.indexOf(10)
      if (i >= 0) end(buf.subarray(0, i).toString('latin1').replace(/\\r$/, ''))
    })
    c.on('error', () => end(undefined))
    c.on('close', () => end(undefined))
  }
  srv.requests = req.requests
  let server
  if (req.tls) {
    if (!fs.existsSync(req.key) || !fs.existsSync(req.cert)) return { error: 'tcp_server{tls=true} needs ' + req.cert + ' and its key' }
    server = tls.createServer({ key: fs.readFileSync(req.key), cert: fs.readFileSync(req.cert) }, onConnection)
  } else server = require('node:net').createServer(onConnection)
  const r = await listenTcp(server, req.port)
  if (r.error) return { error: 'tcp_server on port ' + req.port + ': ' + r.error }
  const conns = new Set()
  server.on(req.tls ? 'secureConnection' : 'connection', (c) => { conns.add(c); c.on('close', () => conns.delete(c)) })
  srv.closed = new Promise((resolve) => server.on('close', resolve))
  srv.close = () => { clearTimeout(srv.timer); server.close(); for (const c of conns) { peerGone(c); c.destroy() } }
  srv.timedOut = () => ({ data: 'timeout' })
  srv.timer = setTimeout(() => finish(srv, srv.timedOut()), req.timeout)
  const id = nextServer++
  servers.set(id, srv)
  return { id }
}
async function udpServe(req) {
  await freePort(req.port)
  const srv = { waiters: [], packets: [], port: req.port }
  const sock = dgram.createSocket({ type: 'udp4', reuseAddr: true })
  const bound = await new Promise((resolve) => {
    sock.once('error', (e) => resolve({ error: 'udp_server on port ' + req.port + ': ' + (e.code === 'EADDRINUSE' ? 'address already in use' : String(e.code || e.message)) }))
    sock.bind(req.port, '127.0.0.1', () => { sock.removeAllListeners('error'); resolve({}) })
  })
  if (bound.error) return bound
  sock.on('message', (m) => {
    srv.packets.push(m)
    if (srv.packets.length >= req.n) finish(srv, { packets: srv.packets })
  })
  srv.closed = new Promise((resolve) => sock.on('close', resolve))
  srv.close = () => { clearTimeout(srv.timer); sock.close() }
  srv.timedOut = () => ({ packets: srv.packets, error: 'timeout' })
  // each read waits up to the timeout, as the receive loop of Kong's helper does
  const arm = () => { if (srv.result) return; clearTimeout(srv.timer); srv.timer = setTimeout(() => finish(srv, srv.timedOut()), req.timeout) }
  sock.on('message', arm)
  arm()
  const id = nextServer++
  servers.set(id, srv)
  return { id }
}
function join(req) {
  const srv = servers.get(req.id)
  if (!srv) return { error: 'no such server' }
  if (srv.result) { servers.delete(req.id); return srv.result }
  return new Promise((resolve) => {
    const t = setTimeout(() => { srv.waiters = srv.waiters.filter((w) => w !== done); resolve({ pending: true }) }, req.timeout)
    const done = () => { clearTimeout(t); servers.delete(req.id); resolve(srv.result) }
    srv.waiters.push(done)
  })
}
// ngx.socket.udp: one connected datagram socket each; what arrives waits in a list for receive
function udpOpen(req) {
  return new Promise((resolve) => {
    const s = { buf: [], closed: false, udp: true }
    const sock = dgram.createSocket(require('node:net').isIP(req.host) === 6 ? 'udp6' : 'udp4')
    sock.once('error', (e) => { sock.close(); resolve({ error: words(e.code, req.host) }) })
    sock.connect(req.port, req.host, () => {
      sock.removeAllListeners('error')
      sock.on('error', (e) => { s.err = e.code || e.message; wake(s) })
      sock.on('message', (m) => { s.buf.push(m); wake(s) })
      s.sock = sock
      const id = next++
      socks.set(id, s)
      resolve({ id })
    })
  })
}
async function udpOp(s, req) {
  if (req.op === 'udp_send') return new Promise((resolve) => s.sock.send(Buffer.from(req.data), (e) => resolve(e ? { error: String(e.code || e.message) } : { ok: true })))
  if (req.op === 'udp_receive') {
    if (!s.buf.length && !(await wait(s, req.timeout)) && !s.buf.length) return { error: s.err ? String(s.err) : 'timeout' }
    const m = s.buf.shift()
    return m ? { data: req.size ? m.subarray(0, req.size) : m } : { error: String(s.err || 'timeout') }
  }
  if (req.op === 'close') { socks.delete(req.id); s.sock.close(); return { ok: true } }
  return { error: 'unknown udp socket operation ' + req.op }
}
const serverOps = { tcp_serve: tcpServe, udp_serve: udpServe, join, udp_open: udpOpen }
`
