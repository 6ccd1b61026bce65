import { Box, Text } from 'ink'

export type KeyHelp = readonly (readonly [key: string, does: string])[]

/** The keys that work now, always on the last line. */
export function HelpLine({ keys }: { readonly keys: KeyHelp }) {
  return (
    <Box>
      <Text wrap="truncate-end">
        {keys.map(([key, does], i) => (
          <Text key={key}>
            {i > 0 ? '  ' : ''}
            <Text bold color="cyan">
              {key}
            </Text>{' '}
            {does}
          </Text>
        ))}
      </Text>
    </Box>
  )
}
