import type {
  DashboardBroker,
  DashboardProps,
  OpenOutcome,
  PdkReplayer,
  StepWalker,
} from '../services/dashboard/types.js'

export type { DashboardBroker, DashboardProps, OpenOutcome, PdkReplayer, StepWalker }

/** A line of feedback under the panel: what a key did, or why it did nothing. */
export interface Notice {
  readonly text: string
  readonly tone?: 'info' | 'error'
}

/** What every panel gets from the dashboard. */
export interface PanelProps {
  /** Only the shown panel reads keys. */
  readonly active: boolean
  /** Lines the panel may use. */
  readonly height: number
  readonly width: number
  /** A panel says when keys are text (a field has focus), so digits and q are typed, not commands. */
  readonly onTyping: (typing: boolean) => void
  /** Shows a line of feedback under the panel; undefined clears it (it was about something now gone). */
  readonly notify: (notice: Notice | undefined) => void
}
