import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import { BrokerCommand } from '../../src/cli/base-command.js'
import { renderRun } from '../../src/services/pdk/render.js'
import { runFixtures, type PdkRunResult } from '../../src/services/pdk/run.js'
import { shippedFixtures } from '../../src/services/pdk/shipped.js'

export default class PdkRun extends BrokerCommand {
  static override summary = 'Replay gateway plugin phase scenarios from fixture files'
  static override description =
    'Runs each fixture through the plugin lifecycle with the emulated kit, prints the phase-by-phase trace, the final response and failed expectations. Exit 0 when all pass, 1 when an expectation fails, 2 for an unreadable or invalid fixture.'

  static override examples = [
    '<%= config.bin %> pdk run js-hello',
    '<%= config.bin %> pdk run fixtures/pdk/request-basics.json',
    '<%= config.bin %> pdk run fixtures/pdk',
    '<%= config.bin %> pdk run fixtures/pdk/js-hello.json --json',
    '<%= config.bin %> pdk run fixtures/pdk --strict',
    '<%= config.bin %> pdk run fixtures/pdk/kong-style-transform.json --plugin-server',
    '<%= config.bin %> pdk run fixtures/pdk/lua-hello.json --lua-path ../kong',
  ]

  static override strict = false
  static override flags = {
    strict: Flags.boolean({
      description:
        "also fail calls made outside the phases the reference lists (Kong's code is followed otherwise); the message gives both lists",
    }),
    'plugin-server': Flags.boolean({
      description:
        "run module plugins on the real kong-js-pluginserver (kong-pdk package), driven as Kong 3.x drives it; a fixture's plugin_server field selects single plugins",
    }),
    'plugin-server-cmd': Flags.string({
      description:
        'shell command of another plugin server speaking the same MessagePack-RPC; {prefix} {sock_name} {socket} {plugins} are filled in (else -p, --sock-name, -d are appended)',
    }),
    'plugin-server-timeout': Flags.integer({
      description: 'milliseconds a plugin event may take before Kong gives up on it (a hung plugin), in process too',
      min: 100,
      default: 10_000,
    }),
    timeout: Flags.integer({
      description:
        "milliseconds a Lua plugin's phase may run before it is stopped (an endless loop); --plugin-server-timeout when absent",
      min: 10,
    }),
    'lua-path': Flags.string({
      description:
        "a folder where Lua plugins' require finds modules (repeatable), searched after each fixture's lua_path and before LUA_PATH",
      multiple: true,
      multipleNonGreedy: true,
    }),
  }

  static override args = {
    fixture: Args.string({
      description: 'fixture file or directory of fixtures, or the name of a shipped fixture (repeatable)',
      required: true,
    }),
  }

  async run(): Promise<PdkRunResult> {
    const { argv, flags } = await this.parse(PdkRun)
    const { results, report, exitCode, stopped } = await runFixtures({
      paths: argv as string[],
      strict: flags.strict,
      pluginServer: flags['plugin-server'],
      pluginServerCmd: flags['plugin-server-cmd'],
      pluginServerTimeout: flags['plugin-server-timeout'],
      timeout: flags.timeout,
      luaPath: flags['lua-path'],
      shipped: shippedFixtures(this.config.root),
    })
    // Coloured on a terminal; hasColors() says no under NO_COLOR or TERM=dumb.
    const color = Boolean(process.stdout.isTTY && process.stdout.hasColors?.())
    if (!this.jsonEnabled() && results.length) process.stdout.write(renderRun(results, color))
    // the fixtures that could not run, after the others' results: exit 2
    if (stopped) throw stopped
    process.exitCode = exitCode
    return report
  }
}
