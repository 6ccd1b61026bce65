import { tint } from './theme.js'
import { basename } from 'node:path'
import { Box, Text } from 'ink'
import { PhaseView } from './PhaseView.js'
import { useKeys } from './useKeys.js'
import { ReplayVerdict } from './ReplayVerdict.js'
import type { PanelProps, PdkReplayer } from './types.js'
import { useCursor } from './useCursor.js'
import { usePdkReplay } from './usePdkReplay.js'

/** Panel 4: pick a fixture of the folder, then step through its replay one phase per key. */
export function PdkPanel({ active, height, pdk, notify }: PanelProps & { readonly pdk: PdkReplayer }) {
  const state = usePdkReplay(pdk)
  const { replay, fixtures } = state
  const cursor = useCursor(fixtures.length)
  const selected = cursor.index

  useKeys(
    (input, key) => {
      if (replay) {
        if (key.return || key.rightArrow || input === ' ' || input === 'n') state.next()
        else if (key.leftArrow || input === 'p') state.previous()
        else if (key.escape) state.close()
        return
      }
      if (key.upArrow) cursor.move(-1)
      if (key.downArrow) cursor.move(1)
      const file = fixtures[cursor.current()]
      if (!key.return) return
      if (!file) notify({ text: `No fixture to replay in ${pdk.dir}.`, tone: 'error' })
      else if (state.busy) notify({ text: 'Replaying already…' })
      else state.load(file)
    },
    { isActive: active },
  )

  if (replay) {
    const total = replay.steps.length
    return (
      <Box flexDirection="column">
        <Text dimColor wrap="truncate-end">
          {replay.file} — {replay.name}
        </Text>
        {state.shown <= total ? (
          <PhaseView step={replay.steps[state.shown - 1]!} index={state.shown} total={total} />
        ) : (
          <ReplayVerdict replay={replay} />
        )}
        <Text dimColor>{state.shown <= total ? 'Enter: next phase' : 'End of the replay. Esc: another fixture'}</Text>
      </Box>
    )
  }
  const visible = Math.max(1, height - 3)
  const first = Math.max(0, Math.min(selected - visible + 1, fixtures.length - visible))
  return (
    <Box flexDirection="column">
      <Text dimColor>
        Fixtures in {pdk.dir} ({fixtures.length}){state.busy ? ' — replaying…' : ''}
      </Text>
      {state.error ? <Text color={tint('red')}>{state.error}</Text> : null}
      {fixtures.slice(first, first + visible).map((file, i) => (
        <Text key={file} inverse={first + i === selected}>
          {first + i === selected ? '› ' : '  '}
          {basename(file)}
        </Text>
      ))}
    </Box>
  )
}
