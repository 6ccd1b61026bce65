import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { waitFor } from './ports.js'

const run = promisify(execFile)

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = createServer()
    srv.once('error', () => resolve(false))
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)))
  })

/** A port whose cluster bus port (+10000) is free too, below the ephemeral range. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 20_000)
    if (taken.has(port) || taken.has(port + 10_000)) continue
    if ((await portFree(port)) && (await portFree(port + 10_000))) {
      taken.add(port)
      return port
    }
  }
}

const cli = (port: number, ...args: string[]) =>
  run('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).then((r) => r.stdout.trim())

export interface Topology {
  ports: number[]
  stop(): Promise<void>
}

function launcher(dir: string) {
  const procs: ChildProcess[] = []
  return {
    start(args: string[]) {
      const p = spawn('redis-server', args, { stdio: 'ignore', cwd: dir })
      procs.push(p)
      return p
    },
    async stopAll() {
      await Promise.all(
        procs.map(
          (p) =>
            new Promise<void>((resolve) => {
              if (p.exitCode !== null || p.signalCode !== null) return resolve()
              p.once('exit', () => resolve())
              p.kill('SIGTERM')
            }),
        ),
      )
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A real Redis Cluster of three masters (Debian's redis-server --cluster-enabled yes). */
export async function startRedisCluster(): Promise<Topology> {
  const dir = mkdtempSync(join(tmpdir(), 'broker-cluster-'))
  const l = launcher(dir)
  const taken = new Set<number>()
  const ports = [await clusterPort(taken), await clusterPort(taken), await clusterPort(taken)]
  try {
    for (const port of ports) {
      l.start([
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ])
    }
    for (const port of ports)
      await waitFor(async () => (await cli(port, 'ping')) === 'PONG', 10_000, `cluster node ${port}`)
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ])
    for (const port of ports)
      await waitFor(
        async () => (await cli(port, 'cluster', 'info')).includes('cluster_state:ok'),
        15_000,
        `cluster state ok at ${port}`,
      )
  } catch (err) {
    await l.stopAll()
    throw err
  }
  return { ports, stop: () => l.stopAll() }
}

export interface SentinelSetup extends Topology {
  master: number
  replica: number
  sentinel: number
  name: string
  /** The port of the current master, as the sentinel reports it. */
  currentMaster(): Promise<number>
  /** Asks the sentinel to fail over and waits until the replica is the master. */
  failover(): Promise<number>
}

/**
 * One master, one replica (two with `replicas: 2`), one sentinel, all real, on loopback; `redisArgs`
 * are added to every redis-server's command line (e.g. `--repl-diskless-sync-delay 0`).
 */
export async function startSentinel({
  replicas = 1,
  redisArgs = [],
}: { replicas?: 1 | 2; redisArgs?: string[] } = {}): Promise<SentinelSetup> {
  const dir = mkdtempSync(join(tmpdir(), 'broker-sentinel-'))
  const l = launcher(dir)
  const taken = new Set<number>()
  const [master, replica, sentinel] = [await clusterPort(taken), await clusterPort(taken), await clusterPort(taken)]
  const second = replicas === 2 ? await clusterPort(taken) : undefined
  const name = 'brokermaster'
  const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...redisArgs]
  const currentMaster = async () =>
    Number((await cli(sentinel, 'sentinel', 'get-master-addr-by-name', name)).split('\n')[1])
  try {
    l.start(['--port', String(master), ...common])
    await waitFor(async () => (await cli(master, 'ping')) === 'PONG', 10_000, 'master')
    for (const port of second ? [replica, second] : [replica]) {
      l.start(['--port', String(port), '--replicaof', '127.0.0.1', String(master), ...common])
      await waitFor(
        async () => (await cli(port, 'info', 'replication')).includes('master_link_status:up'),
        15_000,
        'replica in sync',
      )
    }
    const conf = join(dir, 'sentinel.conf')
    writeFileSync(
      conf,
      [
        `port ${sentinel}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${master} 1`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 5000`,
        `sentinel parallel-syncs ${name} 1`,
        '',
      ].join('\n'),
    )
    l.start([conf, '--sentinel'])
    await waitFor(
      async () => (await cli(sentinel, 'sentinel', 'replicas', name)).includes(String(replica)),
      15_000,
      'sentinel sees the replica',
    )
  } catch (err) {
    await l.stopAll()
    throw err
  }
  return {
    ports: second ? [master, replica, sentinel, second] : [master, replica, sentinel],
    master,
    replica,
    sentinel,
    name,
    currentMaster,
    async failover() {
      const before = await currentMaster()
      // The sentinel refuses (NOGOODSLAVE) until it has fresh facts about the replica: ask again.
      await waitFor(
        async () => (await cli(sentinel, 'sentinel', 'failover', name)) === 'OK',
        15_000,
        'the sentinel to accept a failover',
      )
      const after = await waitFor(
        async () => {
          const now = await currentMaster()
          if (now === before) return undefined
          const role = await cli(now, 'role')
          return role.startsWith('master') ? now : undefined
        },
        20_000,
        'failover',
      )
      return after
    },
    stop: () => l.stopAll(),
  }
}
