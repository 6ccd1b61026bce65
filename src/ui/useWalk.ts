import { useCallback, useRef, useState } from 'react'
import { type ShownAnswer, showAnswer } from '../services/walk/answer.js'
import type { Hop, StopReason } from '../services/walk/walker.js'
import type { StepWalker } from './types.js'

export interface WalkState {
  /** The URL the walk started from; undefined before a walk. */
  start?: string
  hops: readonly Hop[]
  /** The URL the next key press requests. */
  pending?: string
  /** Why the chain ended, once it has. */
  stopped?: string
  /** How it ended: `http_error` for a 4xx/5xx answer, `error` for no answer. */
  reason?: StopReason
  /** The answer that ended the chain, as `broker walk` shows it. */
  answer?: ShownAnswer
  busy: boolean
  begin(url: string): void
  step(): void
  reset(): void
}

/** A redirect chain walked one hop per call of `step()`, with the CLI's Walker. */
export function useWalk(makeWalker: (url: string) => StepWalker): WalkState {
  const walker = useRef<StepWalker>(undefined)
  const [start, setStart] = useState<string>()
  const [hops, setHops] = useState<readonly Hop[]>([])
  const [pending, setPending] = useState<string>()
  const [stopped, setStopped] = useState<{ message: string; reason?: StopReason; answer?: ShownAnswer }>()
  const [busy, setBusy] = useState(false)
  const step = useCallback(() => {
    const w = walker.current
    if (!w || busy || w.stopped) return
    setBusy(true)
    w.next().then(
      (hop) => {
        if (walker.current !== w) return
        if (hop) setHops((h) => [...h, hop])
        setPending(w.pending)
        setStopped(
          w.stopped && {
            message: w.stopped.message,
            reason: w.stopped.reason,
            answer: w.final ? showAnswer(w.final) : undefined,
          },
        )
        setBusy(false)
      },
      (err: Error) => {
        // A hop of a walk since replaced: its failure is not the new walk's.
        if (walker.current !== w) return
        setStopped({ message: err.message, reason: 'error' })
        setBusy(false)
      },
    )
  }, [busy])
  return {
    start,
    hops,
    pending,
    stopped: stopped?.message,
    reason: stopped?.reason,
    answer: stopped?.answer,
    busy,
    begin: (url) => {
      walker.current = makeWalker(url)
      setStart(url)
      setHops([])
      setStopped(undefined)
      // A hop of the last walk may still be under way: its answer is dropped, and it does not hold this walk up.
      setBusy(false)
      setPending(walker.current.pending)
    },
    step,
    reset: () => {
      walker.current = undefined
      setStart(undefined)
      setHops([])
      setPending(undefined)
      setStopped(undefined)
      setBusy(false)
    },
  }
}
