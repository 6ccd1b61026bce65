import { tint } from './theme.js'
import { Box, Text } from 'ink'
import type { ReplayStep } from '../services/dashboard/pdk.js'
import { isAssignment } from '../../pdk/kit/private/trace.js'

const show = (v: unknown): string => {
  const text = JSON.stringify(v)
  return text === undefined ? 'nil' : text.length > 100 ? `${text.slice(0, 97)}...` : text
}

/** One plugin's phase: the calls it made, what the kit returned or threw, and the response after it. */
export function PhaseView({
  step,
  index,
  total,
}: {
  readonly step: ReplayStep
  readonly index: number
  readonly total: number
}) {
  const { trace, response } = step
  const headers = Object.entries(response.headers).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((v) => `${name}: ${v}`),
  )
  return (
    <Box flexDirection="column">
      <Text bold>
        Phase {index}/{total}: <Text color={tint('cyan')}>{trace.phase}</Text> · {trace.plugin}
      </Text>
      {trace.calls.length === 0 ? <Text dimColor> (no kit calls)</Text> : null}
      {trace.calls.map((c, i) => (
        // A throw the fixture stated (`throws`) is part of a passing run: marked as pdk run marks it.
        <Text
          key={i}
          wrap="truncate-end"
          color={tint(c.throws !== undefined ? (c.expected ? 'green' : 'red') : undefined)}
        >
          {'  '}
          {isAssignment(c.call) && c.throws === undefined
            ? `${c.call} = ${show(c.args[0] ?? undefined)}`
            : `${c.call}(${c.args.map(show).join(', ')}) ${
                c.throws !== undefined
                  ? `${c.expected ? '✓ throws as expected:' : '✗'} ${c.throws}`
                  : `→ ${c.returns?.length ? c.returns.map(show).join(', ') : 'nothing'}`
              }`}
        </Text>
      ))}
      {trace.error !== undefined ? (
        // A long message wraps under its own start (a hanging indent), not back to column 0.
        <Box>
          <Box flexShrink={0}>
            <Text color={tint('red')}> ✗ plugin error: </Text>
          </Box>
          <Box flexShrink={1}>
            <Text color={tint('red')}>{trace.error}</Text>
          </Box>
        </Box>
      ) : null}
      <Text> </Text>
      <Text bold>Response after this phase: {response.status}</Text>
      {headers.slice(0, 6).map((h) => (
        <Text key={h} wrap="truncate-end" dimColor>
          {'  '}
          {h}
        </Text>
      ))}
      {response.body ? (
        <Text wrap="truncate-end" dimColor>
          {'  | '}
          {response.body.split('\n')[0]}
        </Text>
      ) : null}
    </Box>
  )
}
