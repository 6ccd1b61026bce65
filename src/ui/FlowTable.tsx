import { Box, Text } from 'ink'
import { cell, countdown, type FlowRow, flowColumns, progressColor } from './flow-rows.js'
import { tint } from './theme.js'

/** The flows, one line each whatever the width (columns shrink or drop), the selected one marked. */
export function FlowTable({
  rows,
  selected,
  height,
  width,
}: {
  readonly rows: readonly FlowRow[]
  readonly selected: number
  readonly height: number
  readonly width: number
}) {
  const columns = flowColumns(width)
  // Keep the selection in view.
  const first = Math.max(0, Math.min(selected - height + 1, rows.length - height))
  const text = (row: FlowRow, name: (typeof columns)[number][0]): string =>
    ({
      hash: row.short,
      flow: row.plugin,
      provider: row.provider,
      progress: row.progress,
      left: countdown(row),
      error: row.error ?? '',
    })[name]
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {'  ' + columns.map(([name, w]) => cell(name, w)).join('')}
      </Text>
      {rows.slice(first, first + height).map((row, i) => {
        const isSelected = first + i === selected
        return (
          <Text key={row.hash} inverse={isSelected} wrap="truncate-end">
            {isSelected ? '› ' : '  '}
            {columns.map(([name, w]) => (
              <Text
                key={name}
                color={tint(
                  name === 'progress'
                    ? progressColor(row)
                    : name === 'error'
                      ? 'red'
                      : name === 'left' && row.expired
                        ? 'gray'
                        : undefined,
                )}
              >
                {cell(text(row, name), w)}
              </Text>
            ))}
          </Text>
        )
      })}
    </Box>
  )
}
