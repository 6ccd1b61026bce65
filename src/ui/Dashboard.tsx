import { Box, Text, useApp } from 'ink'
import { useCallback, useEffect, useState } from 'react'
import { FlowsPanel } from './FlowsPanel.js'
import { helpLayout, type KeyHelp } from './help-layout.js'
import { useKeys } from './useKeys.js'
import { HelpLine } from './HelpLine.js'
import { NewFlowPanel } from './NewFlowPanel.js'
import { PdkPanel } from './PdkPanel.js'
import { PANELS, TabBar } from './TabBar.js'
import { tint } from './theme.js'
import { TooSmall } from './TooSmall.js'
import type { DashboardProps, Notice } from './types.js'
import { useFlows } from './useFlows.js'
import { useTerminalSize } from './useTerminalSize.js'
import { WalkPanel } from './WalkPanel.js'

export const MIN_COLUMNS = 80
export const MIN_ROWS = 20
/** How long a notice stays on its line. */
const NOTICE_MS = 8000

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
    ['u', 'URL'],
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
// Letters each panel answers to (beyond arrows, Enter, Esc); any other letter is said to do nothing.
const PANEL_LETTERS = ['', 'on', 'un ', 'np ']

/** The dashboard: four panels switched with Tab or 1–4, a title, a notice line and the keys at the bottom. */
export function Dashboard(props: DashboardProps) {
  const { exit } = useApp()
  const { columns, rows } = useTerminalSize()
  const [panel, setPanel] = useState(0)
  const [typing, setTyping] = useState(false)
  const [notice, setNotice] = useState<Notice & { at: number }>()
  const flows = useFlows(props.source)
  const notify = useCallback((n: Notice | undefined) => setNotice(n && { ...n, at: Date.now() }), [])
  useEffect(() => {
    if (!notice) return
    const timer = setTimeout(() => setNotice((n) => (n === notice ? undefined : n)), NOTICE_MS)
    return () => clearTimeout(timer)
  }, [notice])

  useKeys((input, key) => {
    // Tabs pressed faster than the terminal is read arrive as one chunk: each counts.
    const tabs = key.tab ? 1 : /^\t+$/.test(input) ? input.length : 0
    if (tabs) {
      setTyping(false)
      setNotice(undefined)
      setPanel((p) => (p + tabs * (key.shift ? PANELS.length - 1 : 1)) % PANELS.length)
      return
    }
    if (typing) return
    if (input === 'q') return exit()
    const n = Number(input)
    if (input.length === 1 && n >= 1 && n <= PANELS.length) {
      setNotice(undefined)
      return setPanel(n - 1)
    }
    if (input.length === 1 && input > ' ' && !key.ctrl && !key.meta && !PANEL_LETTERS[panel]!.includes(input))
      notify({ text: `"${input}" does nothing here; the keys that work are on the last line.` })
  })

  if (columns < MIN_COLUMNS || rows < MIN_ROWS)
    return <TooSmall columns={columns} rows={rows} minColumns={MIN_COLUMNS} minRows={MIN_ROWS} />

  const global: KeyHelp = typing
    ? [
        ['Tab', 'next panel'],
        ['Ctrl-C', 'quit'],
      ]
    : [
        ['Tab/1-4', 'panel'],
        ['q', 'quit'],
      ]
  const help = helpLayout(PANEL_KEYS[panel]!, global, columns)
  // Title, tabs, the notice and the help take their lines; one line is left free at the bottom.
  const height = rows - 1 - 2 - 1 - help.length
  const common = { height, width: columns, onTyping: setTyping, notify }
  return (
    <Box flexDirection="column" height={rows - 1} width={columns}>
      <Text wrap="truncate-end">
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
      <Text wrap="truncate-end" color={tint(notice?.tone === 'error' ? 'red' : 'yellow')}>
        {notice ? notice.text : ' '}
      </Text>
      <HelpLine lines={help} />
    </Box>
  )
}
