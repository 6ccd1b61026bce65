import { tint } from './theme.js'
import { Box, Text } from 'ink'
import type { Replay } from '../services/dashboard/pdk.js'

const show = (v: unknown): string => JSON.stringify(v) ?? 'nil'

/** What `response.get_source` means, as Kong defines it. */
const SOURCES: Readonly<Record<string, string>> = {
  service: "the upstream's answer",
  exit: 'a plugin called kong.response.exit',
  error: "Kong's own error answer",
}

/** The end of a replay: its verdict (pdk/runner/verdict.ts), the final response and each failure, expected against actual. */
export function ReplayVerdict({ replay }: { readonly replay: Replay }) {
  const { result } = replay
  const passed = result.verdict.status === 'pass'
  return (
    <Box flexDirection="column">
      {/* A long fixture name wraps under itself, not back to column 0. */}
      <Box>
        <Box flexShrink={0}>
          <Text bold color={tint(passed ? 'green' : 'red')}>
            {passed ? 'PASS ' : 'FAIL '}
          </Text>
        </Box>
        <Box flexShrink={1}>
          <Text bold color={tint(passed ? 'green' : 'red')}>
            {replay.name}
          </Text>
        </Box>
      </Box>
      <Text wrap="truncate-end">
        Final response {result.response.status} (source: {result.response.source}
        <Text dimColor>{SOURCES[result.response.source] ? ` — ${SOURCES[result.response.source]}` : ''}</Text>)
      </Text>
      {result.verdict.failures.map((f, i) => (
        <Box key={i} flexDirection="column">
          <Text color={tint('red')}>✗ {f.path}</Text>
          <Text color={tint('red')} wrap="truncate-end">
            {'    expected: '}
            {show(f.expected)}
          </Text>
          <Text color={tint('red')} wrap="truncate-end">
            {'    actual:   '}
            {show(f.actual)}
          </Text>
        </Box>
      ))}
    </Box>
  )
}
