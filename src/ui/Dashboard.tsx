import { Box, Text, useApp } from 'ink'
import { useState } from 'react'
import { FlowsPanel } from './FlowsPanel.js'
import { useKeys } from './useKeys.js'
import { HelpLine, type KeyHelp } from './HelpLine.js'
import { NewFlowPanel } from './NewFlowPanel.js'
import { PdkPanel } from './PdkPanel.js'
import { PANELS, TabBar } from './TabBar.js'
import { TooSmall } from './TooSmall.js'
import type { DashboardProps } from './types.js'
import { useFlows } from './useFlows.js'
import { useTerminalSize } from './useTerminalSize.js'
import { WalkPanel } from './WalkPanel.js'

export const MIN_COLUMNS = 80
export const MIN_ROWS = 20

const PANEL_KEYS: readonly KeyHelp[] = [
  [
    ['↑↓', 'select'],
    ['Enter', 'open record'],
    ['Esc', 'back'],
  ],
  [
    ['↑↓', 'field'],
    ['←→', 'preset'],
    ['Enter', 'next/store'],
    ['o', 'open start URL'],
    ['n', 'new'],
  ],
  [
    ['↑↓', 'pick'],
    ['Enter', 'start / next hop'],
    ['Esc', 'back'],
  ],
  [
    ['↑↓', 'pick'],
    ['Enter', 'replay / next phase'],
    ['←', 'previous'],
    ['Esc', 'back'],
  ],
]

/** The dashboard: four panels switched with Tab or 1–4, a title, and the keys on the last line. */
export function Dashboard(props: DashboardProps) {
  const { exit } = useApp()
  const { columns, rows } = useTerminalSize()
  const [panel, setPanel] = useState(0)
  const [typing, setTyping] = useState(false)
  const flows = useFlows(props.source)

  useKeys((input, key) => {
    // Tabs pressed faster than the terminal is read arrive as one chunk: each counts.
    const tabs = key.tab ? 1 : /^\t+$/.test(input) ? input.length : 0
    if (tabs) {
      setTyping(false)
      setPanel((p) => (p + tabs * (key.shift ? PANELS.length - 1 : 1)) % PANELS.length)
      return
    }
    if (typing) return
    if (input === 'q') exit()
    const n = Number(input)
    if (input.length === 1 && n >= 1 && n <= PANELS.length) setPanel(n - 1)
  })

  if (columns < MIN_COLUMNS || rows < MIN_ROWS)
    return <TooSmall columns={columns} rows={rows} minColumns={MIN_COLUMNS} minRows={MIN_ROWS} />

  const height = rows - 5
  const common = { height, width: columns, onTyping: setTyping }
  const global: KeyHelp = typing
    ? [
        ['Tab', 'next panel'],
        ['Ctrl-C', 'quit'],
      ]
    : [
        ['Tab/1-4', 'panel'],
        ['q', 'quit'],
      ]
  return (
    <Box flexDirection="column" height={rows - 1} width={columns}>
      <Text>
        <Text bold>broker dashboard</Text> · {props.mode} {props.broker.url}
        {props.detail ? ` · ${props.detail}` : ''}
      </Text>
      <TabBar active={panel} />
      <Box flexDirection="column" height={height} overflow="hidden" paddingTop={1}>
        <Box display={panel === 0 ? 'flex' : 'none'} flexDirection="column">
          <FlowsPanel {...common} active={panel === 0} flows={flows} broker={props.broker} />
        </Box>
        <Box display={panel === 1 ? 'flex' : 'none'} flexDirection="column">
          <NewFlowPanel {...common} active={panel === 1} broker={props.broker} openUrl={props.openUrl} />
        </Box>
        <Box display={panel === 2 ? 'flex' : 'none'} flexDirection="column">
          <WalkPanel {...common} active={panel === 2} flows={flows} broker={props.broker} walker={props.walker} />
        </Box>
        <Box display={panel === 3 ? 'flex' : 'none'} flexDirection="column">
          <PdkPanel {...common} active={panel === 3} pdk={props.pdk} />
        </Box>
      </Box>
      <HelpLine keys={[...PANEL_KEYS[panel]!, ...global]} />
    </Box>
  )
}
