import { Box, Text } from 'ink'
import type { Hop } from '../services/walk/walker.js'
import { renderHop } from '../services/walk/render.js'
import { tint } from './theme.js'

/** One hop as `broker walk` prints it: request and status, Location, cookie names, OAuth parameters. */
export function HopView({ hop }: { readonly hop: Hop }) {
  const [first, ...rest] = renderHop(hop).split('\n')
  const color = hop.error || hop.status >= 400 ? 'red' : hop.status >= 300 ? 'yellow' : 'green'
  return (
    <Box flexDirection="column">
      <Text color={tint(color)} wrap="truncate-end">
        {first}
      </Text>
      {rest.map((line, i) => (
        <Text key={i} wrap="truncate-end">
          {line}
        </Text>
      ))}
    </Box>
  )
}
