/** What the runner records about each kit call. */
import { toList } from './values.js'

export interface CallRecord {
  call: string
  args: unknown[]
  returns?: unknown[]
  throws?: string
  /** The fixture said this call throws (`throws`) and it did with that message: no failure. */
  expected?: true
}

export type Recorder = (record: CallRecord) => void

/** One call of a call script as it ran: where it is, what the fixture said of it, and what happened. */
export interface ScriptStep {
  /** `$.plugins[<i>].phases.<phase>[<j>]` */
  at: string
  call: string
  /** What the fixture says the call returns (trailing nils may be left out). */
  returns?: unknown[]
  /** A substring of the message the fixture says the call throws. */
  throws?: string
  /** No kit function of that name (`near`: the closest one), or what the call threw, or what it returned. */
  outcome:
    { kind: 'unknown'; near?: string } | { kind: 'threw'; message: string } | { kind: 'returned'; values: unknown[] }
}

/** Whether a record is a Lua plugin's assignment through ngx (`ngx.var.args = …`) rather than a call. */
export const isAssignment = (call: string): boolean => /^ngx\.(?:var|header|ctx)\.|^ngx\.status$/.test(call)

/** Calls a kit function, records the call, and returns its raw result (a Values for several). */
export async function invoke(
  fn: (...a: unknown[]) => unknown,
  call: string,
  args: unknown[],
  record: Recorder | undefined,
): Promise<unknown> {
  let result: unknown
  try {
    result = fn(...args)
    if (result instanceof Promise) result = await result
  } catch (e) {
    record?.({ call, args, throws: errorMessage(e) })
    throw e
  }
  record?.({ call, args, returns: toList(result) })
  return result
}

/** The message of anything thrown. */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e))
