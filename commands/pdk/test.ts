import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import { BrokerCommand } from '../../src/cli/base-command.js'
import { runSpecTests, type PdkTestResult } from '../../src/services/pdk/test.js'

const list = { multiple: true, multipleNonGreedy: true, delimiter: ',' } as const

export default class PdkTest extends BrokerCommand {
  static override summary = "Run a Kong plugin's busted specs in process, without Kong, Docker or a database"
  static override description =
    "Run from the plugin's root (the folder holding kong/plugins/<name>/ and spec/). Runs the *_spec.lua files under the paths given (spec/ by default) with broker's own busted, luassert and spec.helpers; Kong's proxy runs in process on the kit `broker pdk run` uses. A .busted file's task (default) gives what the command line leaves out. Exit 0 when nothing failed, 1 when a test failed or errored, 2 for bad usage. docs/pdk-test.md says what spec.helpers emulates."

  static override examples = [
    '<%= config.bin %> pdk test',
    '<%= config.bin %> pdk test spec/myplugin/10-integration_spec.lua',
    '<%= config.bin %> pdk test -t postgres --exclude-tags flaky',
    '<%= config.bin %> pdk test --filter "gets a .* header" -o TAP',
    '<%= config.bin %> pdk test -o json',
    '<%= config.bin %> pdk test --record fixtures/recorded && <%= config.bin %> pdk run fixtures/recorded',
  ]

  static override strict = false
  static override flags = {
    pattern: Flags.string({ char: 'p', description: 'Lua pattern spec file names match (default _spec)' }),
    tags: Flags.string({ char: 't', description: 'only tests tagged #tag in their names (comma-separated)', ...list }),
    'exclude-tags': Flags.string({ description: 'leave out tests tagged #tag (comma-separated)', ...list }),
    filter: Flags.string({
      description: 'only tests whose full name matches this Lua pattern (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    'filter-out': Flags.string({
      description: 'leave out tests whose full name matches this Lua pattern (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    output: Flags.string({
      char: 'o',
      description: "busted's output: utfTerminal (default), TAP, json or gtest",
      options: ['utfTerminal', 'TAP', 'json', 'gtest'],
    }),
    run: Flags.string({ char: 'r', description: 'the .busted task to read (default: default)' }),
    lazy: Flags.boolean({ description: 'setup and teardown are lazy_setup and lazy_teardown', allowNo: true }),
    'lua-path': Flags.string({
      description: 'another folder require searches after the plugin root (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    record: Flags.string({
      description:
        'write each request the specs proxy as a fixture `broker pdk run` replays to the same answer, into this folder',
      helpValue: 'DIR',
    }),
    timeout: Flags.integer({
      description: 'milliseconds one test may run before it is stopped',
      min: 10,
      default: 60_000,
    }),
  }

  static override args = {
    paths: Args.string({ description: 'spec files or folders (repeatable; default spec/)' }),
  }

  async run(): Promise<PdkTestResult> {
    const { argv, flags } = await this.parse(PdkTest)
    const { text, report, exitCode, recorded } = await runSpecTests({
      root: process.cwd(),
      paths: argv as string[],
      pattern: flags.pattern,
      tags: flags.tags,
      excludeTags: flags['exclude-tags'],
      filter: flags.filter,
      filterOut: flags['filter-out'],
      output: flags.output,
      task: flags.run,
      lazy: flags.lazy,
      luaPath: flags['lua-path'],
      timeoutMs: flags.timeout,
      record: flags.record,
      color: Boolean(process.stdout.isTTY && process.stdout.hasColors?.()),
    })
    if (!this.jsonEnabled()) process.stdout.write(text)
    if (flags.record !== undefined) process.stderr.write(`recorded ${recorded.length} fixtures in ${flags.record}\n`)
    process.exitCode = exitCode
    return report
  }
}
