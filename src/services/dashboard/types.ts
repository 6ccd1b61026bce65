/** What the dashboard is given to show: the data and the services behind its panels (the UI draws, these act). */
import type { HashCheck, StoredFlow } from '../broker-client.js'
import type { FlowEventSource } from './source.js'
import type { Replay } from './pdk.js'
import type { FinalAnswer, Hop, StopReason } from '../walk/walker.js'

/** The broker's public API as the dashboard uses it (a BrokerClient fits). */
export interface DashboardBroker {
  /** The broker's public base URL; start URLs are built on it. */
  readonly url: string
  store(record: Record<string, unknown>): Promise<StoredFlow>
  /** The record with its secrets redacted by the broker. */
  hashCheck(hash: string): Promise<HashCheck>
}

/** One hop per call, as the CLI's Walker makes them. */
export interface StepWalker {
  next(): Promise<Hop | undefined>
  readonly pending?: string
  readonly stopped?: { reason: StopReason; message: string }
  /** The answer that ended the chain, once it has (not a redirect). */
  readonly final?: FinalAnswer
}

/** What became of `o`: opened, or why not (the URL is then to be opened by hand). */
export interface OpenOutcome {
  readonly opened: boolean
  readonly message: string
}

/** Fixtures of a folder and their replay. */
export interface PdkReplayer {
  readonly dir: string
  list(): string[]
  replay(file: string): Promise<Replay>
}

export interface DashboardProps {
  /** Shown in the title: "embedded" or "attached". */
  readonly mode: 'embedded' | 'attached'
  /** Shown in the title, e.g. the store in use. */
  readonly detail?: string
  readonly source: FlowEventSource
  readonly broker: DashboardBroker
  readonly walker: (url: string) => StepWalker
  readonly pdk: PdkReplayer
  /** Opens a URL in the browser (`o`) and says what became of it. */
  readonly openUrl: (url: string) => Promise<OpenOutcome>
}
