import { Args, Flags } from '@oclif/core'
import { BrokerCommand } from '../src/cli/base-command.js'
import { type WalkResult, walk } from '../src/services/walk/index.js'
import { renderHop, renderWalkEnd } from '../src/services/walk/render.js'
import { enterToContinue } from '../src/services/walk/step.js'

export default class Walk extends BrokerCommand {
  static summary = 'Follow a redirect chain one hop at a time, keeping cookies, and decode the OAuth parameters.'
  static description =
    'For each hop: the method, URL, status, Location, cookies set (names only) and the OAuth parameters decoded (client_id, redirect_uri, scope, state, code_challenge, oauth_token, code, …). Codes and tokens are shortened. Stops at a non-redirect, at --max-hops, or before leaving the --allow-host hosts.'

  static examples = [
    '<%= config.bin %> walk "http://localhost:3000/start?hash=…"',
    '<%= config.bin %> walk "$START_URL" --step',
    '<%= config.bin %> walk "$START_URL" --allow-host localhost --allow-host 127.0.0.1 --json',
  ]

  static args = { url: Args.string({ description: 'The URL to start from.', required: true }) }

  static flags = {
    step: Flags.boolean({ summary: 'Wait for Enter before each hop after the first.' }),
    'max-hops': Flags.integer({ summary: 'Stop after this many requests.', default: 20, min: 1 }),
    'allow-host': Flags.string({
      summary: 'Only visit this host (name or name:port); repeat for more.',
      multiple: true,
    }),
  }

  async run(): Promise<WalkResult> {
    const { args, flags } = await this.parse(Walk)
    const human = !this.jsonEnabled()
    const stepper = flags.step ? enterToContinue() : undefined
    const result = await walk({
      url: args.url,
      maxHops: flags['max-hops'],
      allowHosts: flags['allow-host'],
      onHop: human ? (hop) => this.log(renderHop(hop)) : undefined,
      pause: stepper?.pause,
    }).finally(() => stepper?.close())
    if (human) this.logToStderr(renderWalkEnd(result))
    if (result.stopped === 'error') process.exitCode = 1
    return result
  }
}
