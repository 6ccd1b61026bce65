/**
 * `broker pdk test`'s machinery: the options (command line over the `.busted` task), the spec
 * files, each run in a VM of its own (session.ts), and the results in busted's report shape.
 */
import { isAbsolute, join, resolve } from 'node:path'
import { findSpecFiles, readBustedFile, SpecUsageError } from './files.js'
import { OUTPUTS, type FileResults, type OutputName } from './output/index.js'
import { toReport, type SpecReport } from './output/report.js'
import { runSpecFile } from './session.js'

export { SpecUsageError } from './files.js'
export { OUTPUTS, render, type FileResults, type OutputName } from './output/index.js'
export { exitCodeOfReport, type ReportEntry, type SpecReport } from './output/report.js'

export interface SpecRunOptions {
  /** The plugin root (the folder holding `kong/plugins/<name>/` and `spec/`). */
  root: string
  /** Files and folders; the `.busted` task's ROOT, else `spec`. */
  paths?: string[]
  /** A Lua pattern spec file names match; `_spec`. */
  pattern?: string
  tags?: string[]
  excludeTags?: string[]
  /** Lua patterns a test's full name must match (any of them). */
  filter?: string[]
  filterOut?: string[]
  output?: string
  lazy?: boolean
  /** More folders `require` searches after the root. */
  luaPath?: string[]
  /** Milliseconds one test may run; 60000 (busted sets none: a Kong spec may wait out a 10 s UDP read). */
  timeoutMs?: number
  /** The `.busted` task to read; `default`. */
  task?: string
  /** Where a spec's `print` writes (stderr). */
  print?: (line: string) => void
  /** Write each proxied request as a fixture `broker pdk run` replays, into this folder. */
  record?: string
}

export interface SpecRun {
  files: FileResults[]
  report: SpecReport
  output: OutputName
  /** The fixtures --record wrote. */
  recorded: string[]
}

const given = <T>(v: T[] | undefined): T[] | undefined => (v && v.length ? v : undefined)

/** Runs every spec file of a run, one after the other; a file that fails to load is an error result. */
export async function runSpecs(o: SpecRunOptions): Promise<SpecRun> {
  const started = performance.now()
  const task = await readBustedFile(o.root, o.task)
  const output = o.output ?? task.output ?? 'utfTerminal'
  if (!(OUTPUTS as readonly string[]).includes(output))
    throw new SpecUsageError(
      'busted-file',
      join(o.root, '.busted'),
      `output "${output}" is not one broker writes (${OUTPUTS.join(', ')})`,
    )
  const pattern = o.pattern ?? task.pattern ?? '_spec'
  const paths = given(o.paths) ?? task.ROOT ?? ['spec']
  const files = findSpecFiles(o.root, paths, pattern)
  const templates = (task.lpath ?? '')
    .split(';')
    .filter((t) => t.includes('?'))
    .map((t) => (isAbsolute(t) ? t : resolve(o.root, t)))
  const results: FileResults[] = []
  const recorded: string[] = []
  for (const shown of files) {
    results.push({
      file: shown,
      results: await runSpecFile({
        root: o.root,
        file: resolve(o.root, shown),
        shown,
        luaPath: o.luaPath,
        templates,
        tags: given(o.tags) ?? task.tags,
        excludeTags: given(o.excludeTags) ?? task['exclude-tags'],
        filter: given(o.filter) ?? task.filter,
        filterOut: given(o.filterOut) ?? task['filter-out'],
        lazy: o.lazy ?? task.lazy,
        timeoutMs: o.timeoutMs ?? 60_000,
        print: o.print,
        ...(o.record === undefined ? {} : { record: resolve(o.root, o.record), recorded }),
      }),
    })
  }
  const duration = (performance.now() - started) / 1000
  return {
    files: results,
    report: toReport(
      results.flatMap((f) => f.results),
      duration,
    ),
    output: output as OutputName,
    recorded,
  }
}
