// What the primary and a worker tell each other. Kept apart from worker.ts, which imports the
// whole broker (Fastify, ioredis, jose …): the primary imports only this, so it stays small.
import type { ResolvedConfig } from '../../broker/deps.js'
import type { StoreDriver } from '../../broker/store/connect.js'

/**
 * What the primary sends a worker over the IPC channel, once the worker asks for it (`setup?`). Not
 * in the environment: it holds every secret, and a variable deleted at start-up still shows in
 * /proc/<pid>/environ to anyone who may read it.
 */
export interface WorkerSetup {
  config: ResolvedConfig
  driver: StoreDriver
  cwd: string
  /** The name of the worker's Redis connections, by which other instances recognise this one. */
  connectionName?: string
}

/** What a worker tells the primary. `setup?`: it listens for its setup now (a message sent before would be lost). */
export type WorkerMessage =
  { type: 'setup?' } | { type: 'ready'; port: number } | { type: 'fatal'; code: string; message: string }

/** What the primary tells a worker. */
export type PrimaryMessage = { type: 'setup'; setup: WorkerSetup } | { type: 'shutdown' }
