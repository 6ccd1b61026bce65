import { BrokerCommand } from '../src/cli/base-command.js'

export interface VersionResult {
  readonly version: string
  readonly node_version: string
  readonly platform: string
  readonly architecture: string
  readonly user_agent: string
}

export default class Version extends BrokerCommand {
  static override summary = 'Print the broker version, as --version does (--json for its parts).'
  static override examples = ['<%= config.bin %> version', '<%= config.bin %> version --json']

  async run(): Promise<VersionResult> {
    await this.parse(Version)
    const { arch, platform, userAgent, version } = this.config
    if (!this.jsonEnabled()) this.log(userAgent)
    return { version, node_version: process.version, platform, architecture: arch, user_agent: userAgent }
  }
}
