// Entry point of a forked worker process (see index.ts).
import { SETUP_ENV, type WorkerSetup } from './setup.js'
import { runWorker } from './worker.js'

const setup = JSON.parse(process.env[SETUP_ENV] ?? '{}') as WorkerSetup
delete process.env[SETUP_ENV]
await runWorker(setup)
