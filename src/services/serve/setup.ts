// What the primary and a worker tell each other. Kept apart from worker.ts, which imports the
// whole broker (Fastify, ioredis, jose …): the primary imports only this, so it stays small.
import type { ResolvedConfig } from '../../broker/deps.js'
import type { StoreDriver } from '../../broker/store/connect.js'

/** What the primary sends a worker in its environment. */
export interface WorkerSetup {
  config: ResolvedConfig
  driver: StoreDriver
  cwd: string
}

export type WorkerMessage = { type: 'ready'; port: number } | { type: 'fatal'; code: string; message: string }

export const SETUP_ENV = 'BROKER_WORKER_SETUP'
