import { tint } from './theme.js'
import { Text } from 'ink'

/** A one-line field: label, value (masked for secrets), a cursor when focused, and what is wrong. */
export function TextField({
  label,
  value,
  focused,
  masked,
  error,
  labelWidth,
  placeholder,
}: {
  readonly label: string
  readonly value: string
  readonly focused: boolean
  readonly masked?: boolean
  readonly error?: string
  readonly labelWidth?: number
  readonly placeholder?: string
}) {
  const shown = masked ? '*'.repeat(value.length) : value
  return (
    <Text wrap="truncate-end">
      <Text color={tint(focused ? 'cyan' : undefined)}>{focused ? '› ' : '  '}</Text>
      <Text bold={focused}>{label.padEnd(labelWidth ?? label.length)}</Text>
      {'  '}
      {shown || (!focused && placeholder) ? <Text dimColor={!shown}>{shown || placeholder}</Text> : null}
      {focused ? <Text inverse> </Text> : null}
      {error ? <Text color={tint('red')}>{`  ${error}`}</Text> : null}
    </Text>
  )
}

/**
 * A field's value after a key: typed (or pasted) text appended, Backspace/Delete removing one
 * character. Several Backspaces that arrive as one chunk (\x7f\x7f…) remove one each.
 */
export function editValue(
  value: string,
  input: string,
  key: { backspace?: boolean; delete?: boolean; ctrl?: boolean; meta?: boolean },
): string {
  if ((key.backspace || key.delete) && !/[\x7f\b]{2,}/.test(input)) return value.slice(0, -1)
  if (key.ctrl || (key.meta && !/^[\x7f\b]+$/.test(input)) || !input) return value
  let out = value
  for (const ch of input) {
    if (ch === '\x7f' || ch === '\b') out = out.slice(0, -1)
    else if (ch >= ' ') out += ch
  }
  return out
}
