import { Box, type Key, Text } from 'ink'
import { useEffect, useState } from 'react'
import type { FlowEvent } from '../broker/events.js'
import { displayUrl } from '../services/walk/params.js'
import { HopView } from './HopView.js'
import { useKeys } from './useKeys.js'
import { splitChunk } from './keys.js'
import { editValue, TextField } from './TextField.js'
import type { DashboardBroker, PanelProps, StepWalker } from './types.js'
import { useCursor } from './useCursor.js'
import { useStateRef } from './useStateRef.js'
import { useWalk } from './useWalk.js'

/** Panel 3: pick a flow (or paste a URL after `u`), then follow its redirect chain one hop per Enter. */
export function WalkPanel({
  active,
  height,
  flows,
  broker,
  walker,
  onTyping,
}: PanelProps & {
  readonly flows: readonly FlowEvent[]
  readonly broker: DashboardBroker
  readonly walker: (url: string) => StepWalker
}) {
  const walk = useWalk(walker)
  const cursor = useCursor(flows.length)
  const [url, setUrl, currentUrl] = useStateRef('')
  const [editing, setEditing, isEditing] = useStateRef(false)
  const [error, setError] = useState<string>()
  const picking = walk.start === undefined
  const typing = active && picking && editing
  useEffect(() => onTyping(typing), [onTyping, typing])

  const begin = (target: string) => {
    if (!/^https?:\/\/[^/]/.test(target)) return setError(`Not an http(s) URL: ${target}`)
    setError(undefined)
    setEditing(false)
    walk.begin(target)
  }

  const handle = (input: string, key: Key) => {
    if (!picking) {
      if (key.escape) walk.reset()
      else if (key.return || input === ' ' || input === 'n') walk.step()
      return
    }
    if (isEditing()) {
      if (key.escape) setEditing(false)
      else if (key.return) begin(currentUrl().trim())
      else setUrl((u) => editValue(u, input, key))
      return
    }
    if (input === 'u') return setEditing(true)
    if (key.upArrow) return cursor.move(-1)
    if (key.downArrow) return cursor.move(1)
    const flow = flows[cursor.current()]
    if (key.return && flow) begin(`${broker.url}/start?hash=${flow.hash}`)
  }
  useKeys((input, key) => splitChunk(input, key).forEach(([i, k]) => handle(i, k)), { isActive: active })

  if (!picking) {
    // The newest hops that fit; each takes a few lines.
    const hops = walk.hops.slice(-Math.max(1, Math.floor((height - 4) / 6)))
    return (
      <Box flexDirection="column">
        <Text dimColor wrap="truncate-end">
          Walking {displayUrl(walk.start!)} — {walk.hops.length} hop{walk.hops.length === 1 ? '' : 's'}
        </Text>
        {hops.map((hop) => (
          <HopView key={hop.n} hop={hop} />
        ))}
        {walk.busy ? <Text color="yellow">requesting…</Text> : null}
        {walk.stopped ? (
          <Text bold>Ended: {walk.stopped}. Esc: walk another</Text>
        ) : walk.pending && !walk.busy ? (
          <Text color="cyan" wrap="truncate-end">
            next: {displayUrl(walk.pending)} — press Enter to follow
          </Text>
        ) : null}
      </Box>
    )
  }
  return (
    <Box flexDirection="column">
      <TextField label="URL" value={url} focused={editing && active} placeholder="u: paste a start URL" />
      {error ? <Text color="red">{error}</Text> : null}
      <Text dimColor>
        Flows ({flows.length}){flows.length ? ': Enter walks the selected one' : ''}
      </Text>
      {flows.slice(0, Math.max(1, height - 4)).map((flow, i) => (
        <Text key={flow.hash} inverse={!editing && cursor.index === i}>
          {!editing && cursor.index === i ? '› ' : '  '}
          {flow.hash.slice(0, 8)} {flow.plugin.padEnd(22)} {flow.progress.replace(/_/g, ' ')}
        </Text>
      ))}
    </Box>
  )
}
