import { Box, type Key, Text } from 'ink'
import { useEffect, useState } from 'react'
import type { FlowEvent } from '../broker/events.js'
import { answerLines } from '../services/walk/answer.js'
import { displayUrl } from '../services/walk/params.js'
import { renderHop } from '../services/walk/render.js'
import { AnswerView } from './AnswerView.js'
import { cell, countdown, progressColor, toRow } from './flow-rows.js'
import { HopView } from './HopView.js'
import { useKeys } from './useKeys.js'
import { splitChunk } from './keys.js'
import { editValue, TextField } from './TextField.js'
import { tint } from './theme.js'
import type { DashboardBroker, PanelProps, StepWalker } from './types.js'
import { useNow } from './useNow.js'
import { useSelection } from './useSelection.js'
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
  notify,
}: PanelProps & {
  readonly flows: readonly FlowEvent[]
  readonly broker: DashboardBroker
  readonly walker: (url: string) => StepWalker
}) {
  useNow(1000)
  const walk = useWalk(walker)
  // eslint-disable-next-line react-hooks/purity -- the countdowns read the clock at render, ticked by useNow
  const now = Date.now()
  const rows = flows.map((f) => toRow(f, now))
  const selection = useSelection(rows.map((r) => r.hash))
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
    // What was said about the last walk ("The walk has ended") is not about this one.
    notify(undefined)
    walk.begin(target)
  }

  const handle = (input: string, key: Key) => {
    if (!picking) {
      if (key.escape) {
        notify(undefined)
        return walk.reset()
      }
      if (!(key.return || input === ' ' || input === 'n')) return
      if (walk.stopped) notify({ text: 'The walk has ended: Esc to walk another.' })
      else if (walk.busy) notify({ text: 'Still waiting for the answer of the last hop…' })
      else walk.step()
      return
    }
    if (isEditing()) {
      if (key.escape) setEditing(false)
      else if (key.return) begin(currentUrl().trim())
      else setUrl((u) => editValue(u, input, key))
      return
    }
    if (input === 'u') return setEditing(true)
    if (key.upArrow) return selection.move(-1)
    if (key.downArrow) return selection.move(1)
    if (!key.return) return
    const row = rows[selection.current()]
    if (!row) return notify({ text: 'No flow to walk: store one in panel 2, or press u and paste a URL.' })
    begin(`${broker.url}/start?hash=${row.hash}`)
  }
  useKeys((input, key) => splitChunk(input, key).forEach(([i, k]) => handle(i, k)), { isActive: active })

  if (!picking) {
    // Lines: the padding, the heading, the end line; the answer gets up to half of the rest, the newest hops the others.
    const room = height - 3
    const answerRoom = walk.answer ? Math.min(answerLines(walk.answer).length, Math.max(4, Math.ceil(room / 2))) : 0
    let hopRoom = room - answerRoom
    const hops = []
    for (const hop of [...walk.hops].reverse()) {
      const lines = renderHop(hop).split('\n').length
      if (hops.length && lines > hopRoom) break
      hops.unshift(hop)
      hopRoom -= lines
    }
    const failed = walk.reason === 'http_error' || walk.reason === 'error'
    return (
      <Box flexDirection="column">
        <Text dimColor wrap="truncate-end">
          Walking {displayUrl(walk.start!)} — {walk.hops.length} hop{walk.hops.length === 1 ? '' : 's'}
          {hops.length < walk.hops.length ? ` (the last ${hops.length} shown)` : ''}
        </Text>
        {hops.map((hop) => (
          <HopView key={hop.n} hop={hop} />
        ))}
        {walk.answer ? <AnswerView answer={walk.answer} height={answerRoom} /> : null}
        {walk.busy ? <Text color={tint('yellow')}>requesting…</Text> : null}
        {walk.stopped ? (
          <Text bold wrap="truncate-end" color={tint(failed ? 'red' : undefined)}>
            Ended: {walk.stopped}. Esc: walk another
          </Text>
        ) : walk.pending && !walk.busy ? (
          <Text color={tint('cyan')} wrap="truncate-end">
            next: {displayUrl(walk.pending)} — press Enter to follow
          </Text>
        ) : null}
      </Box>
    )
  }
  const visible = Math.max(1, height - 4)
  const first = Math.max(0, Math.min(selection.index - visible + 1, rows.length - visible))
  return (
    <Box flexDirection="column">
      <TextField label="URL" value={url} focused={editing && active} placeholder="u: paste a start URL" />
      {error ? <Text color={tint('red')}>{error}</Text> : null}
      <Text dimColor>
        Flows ({rows.length}){rows.length ? ': Enter walks the selected one' : ''}
      </Text>
      {rows.slice(first, first + visible).map((row, i) => {
        const selected = !editing && selection.index === first + i
        return (
          <Text key={row.hash} inverse={selected} wrap="truncate-end">
            {selected ? '› ' : '  '}
            {cell(row.short, 10)}
            {cell(row.plugin, 22)}
            <Text color={tint(progressColor(row))}>{cell(row.progress, 18)}</Text>
            {countdown(row)}
          </Text>
        )
      })}
    </Box>
  )
}
