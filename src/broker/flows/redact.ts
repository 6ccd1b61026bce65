/** Field names whose values are secrets: never shown back, whatever the flow. */
const SECRET = /secret|password|passwd|private_key|token|^pass$|assertion|verifier|^code$/i

export const REDACTED = '[redacted]'

/** A copy of `record` with every secret value replaced, plus the plugin's own secret fields. */
export function redact(
  record: Readonly<Record<string, unknown>>,
  extra: readonly string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(record)) out[k] = SECRET.test(k) || extra.includes(k) ? REDACTED : v
  return out
}
