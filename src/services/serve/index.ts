import cluster, { type Worker } from 'node:cluster'
import { rm, writeFile } from 'node:fs/promises'
import { type AddressInfo, createServer } from 'node:net'
import { extname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../../config/load.js'
import type { ConfigInput } from '../../config/schema.js'
import { BrokerError } from '../../errors.js'
import { notice } from '../../log.js'
import { connectStore, describeStore, isMultiInstanceStore, resolveDriver } from '../../broker/redis/connect.js'
import type { ResolvedConfig } from '../../broker/deps.js'
import { resolveSecrets } from './secrets.js'
import { SETUP_ENV, type WorkerMessage, type WorkerSetup } from './worker.js'

export interface ServeOptions {
  configFile?: string
  flags?: ConfigInput
  cwd?: string
}

export interface ServeResult {
  url: string
  port: number
  workers: number
  store: string
  pidFile: string
  /** How the primary stopped: a signal's name. */
  stoppedBy: string
}

const MAX_BACKOFF_MS = 30_000
const DRAIN_TIMEOUT_MS = 15_000

/**
 * `--port 0`: a free port picked before the workers start, so that every worker listens on it and
 * the URLs the broker builds (host `localhost:0`, see loadConfig) name it. When no port can be had
 * here, port 0 stays and the workers report why they cannot listen.
 */
async function withFreePort(config: ResolvedConfig): Promise<ResolvedConfig> {
  const port = await new Promise<number>((done) => {
    const probe = createServer()
    probe.once('error', () => done(0))
    probe.listen(0, config.listen, () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => done(port))
    })
  })
  return port ? { ...config, port, host: config.host === 'localhost:0' ? `localhost:${port}` : config.host } : config
}

/** `broker serve`: the primary process. Forks workers, restarts the dead, drains on SIGTERM/SIGINT. */
export async function serve(opts: ServeOptions): Promise<ServeResult> {
  const cwd = opts.cwd ?? process.cwd()
  const { config: loaded } = await loadConfig({ file: opts.configFile, flags: opts.flags, cwd })
  const missing = [!loaded.cookie.secret && 'cookie.secret', !loaded.session.secret && 'session.secret'].filter(Boolean)
  if (missing.length && isMultiInstanceStore(loaded.store)) {
    // Any instance may take any step of a flow: they must all sign cookies and states alike.
    throw new BrokerError(
      'CONFIG_INVALID',
      `${missing.join(' and ')} must be set when several broker instances share the store (store.${loaded.store.cluster ? 'cluster' : 'sentinels'}): set the same values on every instance (BROKER_COOKIE_SECRET, BROKER_SESSION_SECRET).`,
      { key: missing[0] },
    )
  }
  const driver = await resolveDriver(loaded.store)
  let workers = loaded.workers
  if (driver === 'redis') {
    const probe = await connectStore(loaded.store, 'redis')
    await probe.quit().catch(() => undefined)
    // A Sentinel client also holds connections to the sentinels: close everything, or the primary never exits.
    probe.disconnect()
  } else {
    if (loaded.store.driver === 'auto') notice(`no Redis answered at ${loaded.store.host}:${loaded.store.port}; using the embedded in-process store (flows live in this process only)`)
    if (workers > 1) notice(`workers set to 1 (was ${workers}): the embedded store cannot be shared between processes`)
    workers = 1
  }
  const { config: resolved, generated } = resolveSecrets({ ...loaded, workers })
  const config = resolved.port === 0 ? await withFreePort(resolved) : resolved
  if (generated.length) notice(`${generated.join(' and ')} not set: generated for this run; several broker instances need the same secrets set (BROKER_COOKIE_SECRET, BROKER_SESSION_SECRET)`)

  const pidFile = resolve(cwd, config.pid.dir, '.broker.pid')
  try {
    await writeFile(pidFile, `${process.pid}\n`)
  } catch (err) {
    throw new BrokerError('CONFIG_INVALID', `Cannot write the pid file ${pidFile} (pid.dir): ${(err as Error).message}`, { key: 'pid.dir' })
  }

  const setup: WorkerSetup = { config, driver, cwd }
  const here = fileURLToPath(import.meta.url)
  const ext = extname(here)
  // Workers accept on the shared socket themselves: with the primary handing connections out
  // (round robin), a connection handed to a worker at the moment it dies hangs.
  cluster.schedulingPolicy = cluster.SCHED_NONE
  cluster.setupPrimary({
    exec: resolve(here, '..', `worker-main${ext}`),
    execArgv: ext === '.ts' ? ['--import', 'tsx'] : [],
    silent: false,
  })

  const storeLabel = driver === 'redis' ? `redis ${describeStore(config.store)}` : 'embedded'
  const url = `${config.protocol}://${config.host}`
  let shuttingDown = false
  let readyCount = 0
  let everReady = false
  let announced = false
  let boundPort = config.port
  const crashes: number[] = []
  const readyWorkers = new Set<number>()

  return new Promise<ServeResult>((resolvePromise, rejectPromise) => {
    const fork = (): Worker => {
      const worker = cluster.fork({ [SETUP_ENV]: JSON.stringify(setup) })
      let ready = false
      worker.on('message', (msg: WorkerMessage) => {
        if (msg.type === 'ready') {
          ready = true
          everReady = true
          readyWorkers.add(worker.id)
          boundPort = msg.port
          if (++readyCount === workers && !announced) announced = true, notice(`listening on port ${msg.port} (${url}), ${workers} worker${workers > 1 ? 's' : ''}, store: ${storeLabel}, pid ${process.pid}`)
        } else if (msg.type === 'fatal' && !everReady) {
          void stop('fatal', new BrokerError('FAILED', `A worker could not start: ${msg.message}`))
        }
      })
      worker.on('exit', (code, signal) => {
        readyWorkers.delete(worker.id)
        if (shuttingDown) return
        if (!everReady) return void stop('fatal', new BrokerError('FAILED', `A worker exited before it could serve (${signal ?? `code ${code}`}).`))
        // Back off when workers keep dying, so a crash loop does not spin the CPU.
        const now = Date.now()
        crashes.push(now)
        while (crashes.length && now - crashes[0]! > 60_000) crashes.shift()
        const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** (crashes.length - 1))
        notice(`worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting a new one in ${delay} ms`)
        if (ready) readyCount--
        setTimeout(() => !shuttingDown && fork(), delay).unref()
      })
      return worker
    }

    const stop = async (reason: string, error?: BrokerError) => {
      if (shuttingDown) return
      shuttingDown = true
      const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead())
      await Promise.all(
        alive.map(
          (w) =>
            new Promise<void>((done) => {
              const timer = setTimeout(() => {
                w.process.kill('SIGKILL')
                done()
              }, DRAIN_TIMEOUT_MS)
              w.once('exit', () => {
                clearTimeout(timer)
                done()
              })
              // A worker still starting may not listen for messages yet; a signal reaches it either way.
              if (w.isConnected() && readyWorkers.has(w.id)) w.send({ type: 'shutdown' })
              else w.process.kill('SIGTERM')
            }),
        ),
      )
      await rm(pidFile, { force: true })
      process.off('SIGTERM', onTerm)
      process.off('SIGINT', onInt)
      if (error) rejectPromise(error)
      else {
        notice(`stopped (${reason})`)
        resolvePromise({ url, port: boundPort, workers, store: storeLabel, pidFile, stoppedBy: reason })
      }
    }
    const onTerm = () => void stop('SIGTERM')
    const onInt = () => void stop('SIGINT')
    process.on('SIGTERM', onTerm)
    process.on('SIGINT', onInt)
    for (let i = 0; i < workers; i++) fork()
  })
}
