import { useEffect, useState } from 'react'
import type { FlowEvent } from '../events.js'
import type { FlowEventSource } from '../services/dashboard/source.js'
import { mergeFlow } from './flow-rows.js'

/** The flows of an event source, newest first: its snapshot, then every event as it arrives. */
export function useFlows(source: FlowEventSource): readonly FlowEvent[] {
  const [flows, setFlows] = useState<ReadonlyMap<string, FlowEvent>>(new Map())
  useEffect(() => {
    let live = true
    const apply = (events: readonly FlowEvent[]) =>
      setFlows((current) => {
        const next = new Map(current)
        for (const event of events) {
          const merged = mergeFlow(next.get(event.hash), event)
          next.delete(event.hash)
          next.set(event.hash, merged)
        }
        return next
      })
    const listener = (event: FlowEvent) => apply([event])
    source.subscribe(listener)
    source
      .snapshot()
      .then((events) => {
        // Events that arrived meanwhile are newer than the snapshot: keep them on top.
        if (!live) return
        setFlows((current) => {
          const next = new Map<string, FlowEvent>(events.map((e) => [e.hash, e]))
          for (const [hash, event] of current) {
            const merged = mergeFlow(next.get(hash), event)
            next.delete(hash)
            next.set(hash, merged)
          }
          return next
        })
      })
      .catch(() => undefined)
    return () => {
      live = false
      source.unsubscribe(listener)
    }
  }, [source])
  return [...flows.values()].reverse()
}
