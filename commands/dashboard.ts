import * as Flags from '@oclif/core/flags'
import { BrokerCommand } from '../src/cli/base-command.js'
import { configFileFlag } from '../src/cli/flags.js'
import type { DashboardResult } from '../src/services/dashboard/index.js'

export default class Dashboard extends BrokerCommand {
  static override summary =
    'A full-screen terminal dashboard: live flows, a New flow form, a step-by-step walk, PDK replay.'
  static override description = `Starts an embedded broker (one worker, the configured store; -c and --port as for serve) and shows its flows live, or attaches to a running broker with --attach through its admin API (serve --admin-key). Panels: 1 Flows, 2 New flow, 3 Walk, 4 PDK replay; Tab or 1-4 switch, q or Ctrl-C quits (the embedded broker stops). Needs a terminal: without one it exits 2.`

  static override examples = [
    '<%= config.bin %> dashboard',
    '<%= config.bin %> dashboard --port 4000 --fixtures my-fixtures/',
    'BROKER_ADMIN_KEY=… <%= config.bin %> dashboard --attach http://localhost:3000',
  ]

  static override flags = {
    config: configFileFlag({ summary: 'Config file, as for serve.' }),
    port: Flags.integer({
      char: 'p',
      summary: 'Port of the embedded broker (port, default 3000).',
      min: 0,
      max: 65535,
    }),
    store: Flags.string({
      summary: 'Store driver of the embedded broker (store.driver, default auto).',
      options: ['auto', 'redis', 'memory'],
    }),
    attach: Flags.string({ summary: 'URL of a running broker to attach to instead of starting one.' }),
    'admin-key': Flags.string({
      summary: 'The admin key (admin.key): to attach, or to open the embedded broker to --attach.',
      env: 'BROKER_ADMIN_KEY',
    }),
    fixtures: Flags.string({
      summary:
        'Folder of PDK fixtures for the PDK replay panel (default: fixtures/pdk here, else the fixtures shipped with broker).',
    }),
  }

  async run(): Promise<DashboardResult> {
    const { flags } = await this.parse(Dashboard)
    // Loaded here: the dashboard brings Ink, React and a whole broker, which no other command needs.
    const [{ dashboard }, { renderDashboard }] = await Promise.all([
      import('../src/services/dashboard/index.js'),
      import('../src/ui/render-dashboard.js'),
    ])
    return dashboard({
      configFile: flags.config,
      flags: { port: flags.port, store: { driver: flags.store as 'auto' | 'redis' | 'memory' | undefined } },
      attach: flags.attach,
      adminKey: flags['admin-key'],
      fixtures: flags.fixtures,
      packageRoot: this.config.root,
      interactive: Boolean(process.stdin.isTTY),
      render: (props) => renderDashboard(props),
    })
  }
}
