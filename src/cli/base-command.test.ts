import { Args, Command, Flags } from '@oclif/core'
import { describe, expect, it } from 'vitest'
import { brokerError } from '../errors/index.js'
import { toBrokerError } from './base-command.js'

class Probe extends Command {
  static override args = { hash: Args.string({ description: 'The hash to look up.', required: true }) }
  static override flags = {
    hops: Flags.integer({ min: 1 }),
    store: Flags.string({ options: ['auto', 'redis', 'memory'] }),
  }
  async run() {
    return this.parse(Probe)
  }
}

/** The error oclif's parser throws for `argv`. */
async function parseError(argv: string[]): Promise<Error> {
  const err = await Probe.run(argv, { root: import.meta.dirname }).then(
    () => undefined,
    (e: Error) => e,
  )
  if (!err) throw new Error(`${argv.join(' ')} parsed`)
  return err
}

describe('toBrokerError', () => {
  it('keeps registry errors as they are', () => {
    const err = brokerError('unknownHash')
    expect(toBrokerError(err)).toBe(err)
  })

  it('names a missing argument on one line, as a usage error', async () => {
    const err = toBrokerError(await parseError([]))
    expect(err.code).toBe('USAGE')
    expect(err.exit).toBe(2)
    expect(err.message).toBe('Missing required argument: hash (The hash to look up); see --help.')
  })

  it('makes a flag value parse failure a one-line usage error', async () => {
    const err = toBrokerError(await parseError(['h', '--hops', '0']))
    expect(err.code).toBe('USAGE')
    expect(err.message).toBe('--hops: Expected an integer greater than or equal to 1 but received: 0; see --help.')
  })

  it('makes a flag of a fixed list given without a value a usage error naming the values, not INTERNAL', async () => {
    const err = toBrokerError(await parseError(['h', '--store']))
    expect(err.code).toBe('USAGE')
    expect(err.exit).toBe(2)
    expect(err.message).toBe('Flag --store expects one of these values: auto, redis, memory; see --help.')
  })

  it("suggests the command's closest flag for a misspelt one", async () => {
    const err = toBrokerError(await parseError(['h', '--hosp', '1']), { flags: ['hops', 'store', 'json'] })
    expect(err.code).toBe('USAGE')
    expect(err.message).toBe('Nonexistent flag: --hosp (did you mean --hops?); see --help.')
    const far = toBrokerError(await parseError(['h', '--zzzzzz']), { flags: ['hops', 'store'] })
    expect(far.message).toBe('Nonexistent flag: --zzzzzz; see --help.')
  })

  it('makes anything unexpected INTERNAL with its first line only', () => {
    const err = toBrokerError(new Error("Couldn't access platform storage\n\nStack backtrace:\n  0: <unknown>"))
    expect(err.code).toBe('INTERNAL')
    expect(err.exit).toBe(1)
    expect(err.message).toBe("Couldn't access platform storage")
  })
})
