import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import { BrokerCommand } from '../src/cli/base-command.js'
import type { WalkResult } from '../src/services/walk/index.js'

export default class Walk extends BrokerCommand {
  static override summary =
    'Follow a redirect chain one hop at a time, keeping cookies, and decode the OAuth parameters.'
  static override description =
    'For each hop: the method, URL, status, Location, cookies set (names only) and the OAuth parameters decoded (client_id, redirect_uri, scope, state, code_challenge, oauth_token, code, …). Stops at a non-redirect, at --max-hops, or before leaving the --allow-host hosts; the answer that ended the chain is shown with its body (JSON pretty-printed). Codes and tokens are shortened. Exits 1 when the chain ends in a 4xx or 5xx answer or a hop gets no answer.'

  static override examples = [
    '<%= config.bin %> walk "http://localhost:3000/start?hash=…"',
    '<%= config.bin %> walk "$START_URL" --step',
    '<%= config.bin %> walk "$START_URL" --allow-host localhost --allow-host 127.0.0.1 --json',
  ]

  static override args = { url: Args.string({ description: 'The URL to start from.', required: true }) }

  static override flags = {
    step: Flags.boolean({ summary: 'Wait for Enter before each hop after the first.' }),
    'max-hops': Flags.integer({ summary: 'Stop after this many requests.', default: 20, min: 1 }),
    'allow-host': Flags.string({
      summary: 'Only visit this host (name or name:port); repeat for more.',
      multiple: true,
      multipleNonGreedy: true,
    }),
  }

  async run(): Promise<WalkResult> {
    const { args, flags } = await this.parse(Walk)
    // Loaded here so that other commands (and --version) do not load the walker.
    const [{ walk }, { renderAnswer, renderHop, renderWalkEnd }, { enterToContinue }] = await Promise.all([
      import('../src/services/walk/index.js'),
      import('../src/services/walk/render.js'),
      import('../src/services/walk/step.js'),
    ])
    const human = !this.jsonEnabled()
    const stepper = flags.step ? enterToContinue() : undefined
    const result = await walk({
      url: args.url,
      maxHops: flags['max-hops'],
      allowHosts: flags['allow-host'],
      onHop: human ? (hop) => this.log(renderHop(hop)) : undefined,
      pause: stepper?.pause,
    }).finally(() => stepper?.close())
    if (human) {
      const answer = renderAnswer(result)
      if (answer) this.log(answer)
      this.logToStderr(renderWalkEnd(result))
    }
    if (result.stopped === 'error' || result.stopped === 'http_error') process.exitCode = 1
    return result
  }
}
