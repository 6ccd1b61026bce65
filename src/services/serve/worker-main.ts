// Entry point of a forked worker process (see index.ts): asks the primary for its setup over the
// IPC channel, then runs. The setup holds every secret, so it never travels in the environment.
import type { PrimaryMessage, WorkerMessage, WorkerSetup } from './setup.js'
import { runWorker } from './worker.js'

// `serve` starts a worker with --expose-gc for one full collection once it listens (worker.ts).
const collect = (globalThis as { gc?: () => void }).gc

const setup = await new Promise<WorkerSetup>((resolve) => {
  // A primary that went away before answering: nothing to run for.
  const orphaned = () => process.exit(1)
  const onMessage = (msg: PrimaryMessage) => {
    if (msg?.type !== 'setup') return
    process.off('message', onMessage)
    process.off('disconnect', orphaned)
    resolve(msg.setup)
  }
  process.on('message', onMessage)
  process.on('disconnect', orphaned)
  process.send?.({ type: 'setup?' } satisfies WorkerMessage)
})
await runWorker(setup, collect)
