import { Box, Text } from 'ink'
import type { KeyItem } from './help-layout.js'
import { tint } from './theme.js'

export type { KeyHelp } from './help-layout.js'

/** The keys that work now, on the last lines (as `helpLayout` laid them out). */
export function HelpLine({ lines }: { readonly lines: readonly (readonly KeyItem[])[] }) {
  return (
    <Box flexDirection="column">
      {lines.map((items, n) => (
        <Text key={n} wrap="truncate-end">
          {items.map(([key, does], i) => (
            <Text key={key}>
              {i > 0 ? '  ' : ''}
              <Text bold color={tint('cyan')}>
                {key}
              </Text>
              {does ? ` ${does}` : ''}
            </Text>
          ))}
        </Text>
      ))}
    </Box>
  )
}
