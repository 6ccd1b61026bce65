// `broker serve`'s primary process, as bin/run.js starts it: a small entry that loads no CLI
// framework, config schema, logger or Redis client (bench: its resident memory). The CLI proper runs
// in a child process that parses the flags, resolves the config and probes Redis as every other
// command does, printing what it prints (help, usage and config errors) and exiting with its code;
// when all is well it hands the plan over (services/serve/handover.ts) and exits, and this process runs the primary.
import { fork } from 'node:child_process'
import { HANDOVER_ENV, type Handover } from '../services/serve/handover.js'
import { runPrimary } from '../services/serve/primary.js'
import { printError } from './print-error.js'

/** Runs `broker serve <args>` with `bin` (bin/run.js) resolving in a child; sets process.exitCode. */
export async function main(bin: string, args: readonly string[]): Promise<void> {
  const child = fork(bin, ['serve', ...args], {
    env: { ...process.env, [HANDOVER_ENV]: '1' },
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  })
  // A signal meant for this process while the child resolves: the child stops too.
  const forward = (signal: NodeJS.Signals) => child.kill(signal)
  process.on('SIGTERM', forward)
  process.on('SIGINT', forward)
  const handed = await new Promise<Handover | { code: number }>((settle) => {
    child.on('message', (msg: Handover) => msg?.type === 'serve-plan' && settle(msg))
    // 'close', not 'exit': it comes once the IPC channel is closed too, so after every message the child sent.
    child.on('close', (code, signal) => settle({ code: code ?? (signal ? 128 + signalNumber(signal) : 1) }))
  })
  process.off('SIGTERM', forward)
  process.off('SIGINT', forward)
  // The child printed why it stopped (or its help): its exit code is this command's.
  if ('code' in handed) return void (process.exitCode = handed.code)
  // The child exits once the plan is sent; its channel may be gone already.
  if (child.connected) child.disconnect()
  try {
    const result = await runPrimary(handed.plan)
    if (handed.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n')
  } catch (err) {
    // Loaded only now: the registry is no part of a primary that runs well.
    const { brokerError, isBrokerError } = await import('../errors/index.js')
    const broker = isBrokerError(err)
      ? err
      : brokerError('unexpectedInCli', { firstLine: String((err as Error)?.message ?? err).split('\n')[0] ?? '' })
    printError(broker, handed.json, (err as Error)?.stack)
    process.exitCode = broker.exit
  }
}

const signalNumber = (signal: NodeJS.Signals): number => ({ SIGINT: 2, SIGTERM: 15, SIGKILL: 9 })[signal as string] ?? 1
