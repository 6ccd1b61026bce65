import { Box, Text } from 'ink'
import { countdown, type FlowRow, progressColor } from './flow-rows.js'

const COLUMNS = [
  ['hash', 10],
  ['flow', 22],
  ['provider', 24],
  ['progress', 19],
  ['left', 8],
] as const

const cell = (text: string, width: number) =>
  text.length >= width ? `${text.slice(0, width - 2)}… ` : text.padEnd(width)

/** The flows, one line each, the selected one marked; at most `height` lines of rows. */
export function FlowTable({
  rows,
  selected,
  height,
}: {
  readonly rows: readonly FlowRow[]
  readonly selected: number
  readonly height: number
}) {
  // Keep the selection in view.
  const first = Math.max(0, Math.min(selected - height + 1, rows.length - height))
  return (
    <Box flexDirection="column">
      <Text bold>{'  ' + COLUMNS.map(([name, width]) => cell(name, width)).join('')}</Text>
      {rows.slice(first, first + height).map((row, i) => {
        const isSelected = first + i === selected
        return (
          <Text key={row.hash} inverse={isSelected}>
            {isSelected ? '› ' : '  '}
            {cell(row.short, 10)}
            {cell(row.plugin, 22)}
            {cell(row.provider, 24)}
            <Text color={progressColor(row.progress)}>{cell(row.progress, 19)}</Text>
            <Text color={row.secondsLeft === 0 ? 'gray' : undefined}>{cell(countdown(row), 8)}</Text>
            {row.error ? <Text color="red">{row.error}</Text> : null}
          </Text>
        )
      })}
    </Box>
  )
}
