/** Helpers for the ink-testing-library tests of the dashboard. */
import type { FlowEvent } from '../../src/broker/events.js'

/** Key sequences as a terminal sends them. */
export const KEY = {
  up: '\u001B[A',
  down: '\u001B[B',
  right: '\u001B[C',
  left: '\u001B[D',
  enter: '\r',
  escape: '\u001B',
  tab: '\t',
  backspace: '\u007F',
} as const

/** Lets React and Ink flush what a key or an event scheduled. */
export const settle = () =>
  new Promise<void>((resolve) => setImmediate(resolve)).then(
    () => new Promise<void>((resolve) => setImmediate(resolve)),
  )

/** A flow event with defaults. */
export function flowEvent(over: Partial<FlowEvent> = {}): FlowEvent {
  return {
    type: 'stored',
    hash: 'AbCdEfGh0123456789abcdefghijklmn',
    plugin: 'oauth_2_2-legged',
    provider: 'provider.example',
    progress: 'stored',
    at: Date.now(),
    expiresAt: Date.now() + 60_000,
    ...over,
  }
}
