import { Box, Text } from 'ink'
import { useState } from 'react'
import type { FlowEvent } from '../broker/events.js'
import type { HashCheck } from '../services/broker-client.js'
import { toRow } from './flow-rows.js'
import { useKeys } from './useKeys.js'
import { FlowTable } from './FlowTable.js'
import { RecordView } from './RecordView.js'
import type { DashboardBroker, PanelProps } from './types.js'
import { useNow } from './useNow.js'
import { useSelection } from './useSelection.js'

interface Opened {
  hash: string
  check?: HashCheck
  error?: string
}

/** Panel 1: every flow the event source told of, live, with a countdown; Enter opens its record. */
export function FlowsPanel({
  active,
  height,
  width,
  flows,
  broker,
  notify,
}: PanelProps & { readonly flows: readonly FlowEvent[]; readonly broker: DashboardBroker }) {
  // The tick re-renders; the rows read the clock at render, so a flow that just arrived is not a second off.
  useNow(1000)
  const [opened, setOpened] = useState<Opened>()
  // eslint-disable-next-line react-hooks/purity -- reading the clock at render is the point (above); nothing memoizes this panel
  const now = Date.now()
  const rows = flows.map((f) => toRow(f, now))
  const selection = useSelection(rows.map((r) => r.hash))

  useKeys(
    (_input, key) => {
      if (opened) {
        if (key.escape || key.backspace || key.return) setOpened(undefined)
        return
      }
      if (key.upArrow) selection.move(-1)
      if (key.downArrow) selection.move(1)
      if (!key.return) return
      const row = rows[selection.current()]
      if (!row) return notify({ text: 'No flow to open yet: store one in panel 2.' })
      setOpened({ hash: row.hash })
      broker.hashCheck(row.hash).then(
        (check) => setOpened((o) => (o?.hash === row.hash ? { ...o, check } : o)),
        (err: Error) => setOpened((o) => (o?.hash === row.hash ? { ...o, error: `${row.short}: ${err.message}` } : o)),
      )
    },
    { isActive: active },
  )

  if (opened) {
    // The record as the broker answered; its progress and countdown from the live flow, as the table shows them.
    const live = rows.find((r) => r.hash === opened.hash)
    return (
      <RecordView
        check={opened.check}
        error={opened.error}
        loading={!opened.check && !opened.error}
        live={live}
        now={now}
      />
    )
  }
  if (!rows.length) {
    return (
      <Box flexDirection="column">
        <Text>No flows yet. Store one in panel 2 (New flow) or with `broker store`; it appears here at once.</Text>
      </Box>
    )
  }
  return (
    <Box flexDirection="column">
      <Text dimColor>
        {rows.length} flow{rows.length === 1 ? '' : 's'}, newest first
      </Text>
      <FlowTable rows={rows} selected={selection.index} height={Math.max(1, height - 3)} width={width} />
    </Box>
  )
}
