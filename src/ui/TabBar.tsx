import { Box, Text } from 'ink'

export const PANELS = ['Flows', 'New flow', 'Walk', 'PDK replay'] as const

/** The panels' names with their number keys; the shown one inverted. */
export function TabBar({ active }: { readonly active: number }) {
  return (
    <Box gap={1}>
      {PANELS.map((name, i) => (
        <Text key={name} inverse={i === active} bold={i === active}>
          {` ${i + 1} ${name} `}
        </Text>
      ))}
    </Box>
  )
}
