import { Box, Text } from 'ink'
import type { HashCheck } from '../services/broker-client.js'

/** One stored record as the broker answers /hash-check: its secrets already redacted there. */
export function RecordView({
  check,
  error,
  loading,
}: {
  readonly check?: HashCheck
  readonly error?: string
  readonly loading?: boolean
}) {
  if (loading) return <Text>Loading the record…</Text>
  if (error) return <Text color="red">{error}</Text>
  if (!check) return null
  const fields = Object.entries(check.record)
  const width = Math.max(8, ...fields.map(([k]) => k.length))
  return (
    <Box flexDirection="column">
      <Text bold>
        {check.hash.slice(0, 8)}… · {check.plugin} · {check.progress.replace(/_/g, ' ')} · {check.expires_in}s left
      </Text>
      {check.description ? <Text dimColor>{check.description}</Text> : null}
      {check.error ? <Text color="red">{`${check.error.code}: ${check.error.description}`}</Text> : null}
      <Text> </Text>
      {fields.map(([k, v]) => (
        <Text key={k} wrap="truncate-end">
          {'  '}
          {k.padEnd(width)}{' '}
          <Text color={v === '[redacted]' ? 'gray' : undefined}>{typeof v === 'string' ? v : JSON.stringify(v)}</Text>
        </Text>
      ))}
    </Box>
  )
}
