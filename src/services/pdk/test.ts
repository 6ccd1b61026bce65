/** `broker pdk test`: runs a plugin's busted specs in process and renders them as the chosen busted output. */
import { brokerError } from '../../errors/index.js'
import {
  exitCodeOfReport,
  render,
  runSpecs,
  SpecUsageError,
  type SpecReport,
  type SpecRunOptions,
} from '../../../pdk/spec-runner/index.js'

export type PdkTestOptions = SpecRunOptions & {
  /** Colour the terminal outputs. */
  color?: boolean
}

/** The run in busted's JSON shape, exactly as `--json` (and `-o json`) prints it. */
export type PdkTestResult = SpecReport

/** Runs the specs; the text for stdout, the report and the exit status (1 when a test failed or errored). */
export async function runSpecTests(
  options: PdkTestOptions,
): Promise<{ text: string; report: PdkTestResult; exitCode: 0 | 1; recorded: string[] }> {
  const run = await runSpecs(options).catch((e: unknown) => {
    if (!(e instanceof SpecUsageError)) throw e
    const values = { message: e.message, path: e.path }
    if (e.kind === 'busted-file') throw brokerError('bustedInvalid', values)
    throw brokerError(e.kind === 'no-specs' ? 'specNoneFound' : 'specPathNotFound', values)
  })
  return {
    text: render(run.output, run.files, run.report, options.color === true),
    report: run.report,
    exitCode: exitCodeOfReport(run.report),
    recorded: run.recorded,
  }
}
