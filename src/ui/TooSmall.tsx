import { Text } from 'ink'

/** Said instead of drawing when the terminal cannot hold the dashboard. */
export function TooSmall({
  columns,
  rows,
  minColumns,
  minRows,
}: {
  readonly columns: number
  readonly rows: number
  readonly minColumns: number
  readonly minRows: number
}) {
  return (
    <Text wrap="wrap">
      Terminal too small ({columns}×{rows}): the dashboard needs {minColumns}×{minRows}. Enlarge it, or press q to quit.
    </Text>
  )
}
