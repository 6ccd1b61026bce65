import { Box, Text } from 'ink'
import type { HashCheck } from '../services/broker-client.js'
import { type FlowRow, progressColor, secondsLeft } from './flow-rows.js'
import { tint } from './theme.js'

/**
 * One stored record as the broker answers /hash-check (its secrets already redacted there), with
 * the flow's progress and countdown live: from the flows table's row when there is one, else
 * counted down from the record's expiry.
 */
export function RecordView({
  check,
  error,
  loading,
  live,
  now,
}: {
  readonly check?: HashCheck
  readonly error?: string
  readonly loading?: boolean
  readonly live?: FlowRow
  readonly now: number
}) {
  if (loading) return <Text>Loading the record…</Text>
  if (error) return <Text color={tint('red')}>{error}</Text>
  if (!check) return null
  const expiresAt = Date.parse(check.expires_at)
  const left = live?.secondsLeft ?? (Number.isNaN(expiresAt) ? undefined : secondsLeft(expiresAt, now))
  // As the flows table words it: the last progress reached, then the time left or "expired".
  const row = {
    progress: live?.progress ?? check.progress.replace(/_/g, ' '),
    expired: live?.expired ?? left === 0,
    secondsLeft: left,
  }
  const fields = Object.entries(check.record)
  const width = Math.max(8, ...fields.map(([k]) => k.length))
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {check.hash.slice(0, 8)}… · {check.plugin} · <Text color={tint(progressColor(row))}>{row.progress}</Text> ·{' '}
        {row.expired ? 'expired' : `${left ?? check.expires_in}s left`}
      </Text>
      {check.description ? (
        <Text dimColor wrap="truncate-end">
          {check.description}
        </Text>
      ) : null}
      {check.error ? (
        <Text color={tint('red')} wrap="truncate-end">{`${check.error.code}: ${check.error.description}`}</Text>
      ) : null}
      <Text> </Text>
      {fields.map(([k, v]) => (
        <Text key={k} wrap="truncate-end">
          {'  '}
          {k.padEnd(width + 2)}
          <Text color={tint(v === '[redacted]' ? 'gray' : undefined)}>
            {typeof v === 'string' ? v : JSON.stringify(v)}
          </Text>
        </Text>
      ))}
    </Box>
  )
}
