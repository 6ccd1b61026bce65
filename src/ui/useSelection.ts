import { useEffect, useLayoutEffect, useRef } from 'react'
import { useStateRef } from './useStateRef.js'

export interface Selection {
  /** The row of the selected item now, kept within 0 … count-1. */
  readonly index: number
  move(delta: number): void
  /** The selected row now, even before a re-render (keys that arrive together: ↓↓ Enter). */
  current(): number
}

interface Selected {
  id?: string
  /** Where it was: the fallback when the item is gone. */
  index: number
}

const clamp = (i: number, count: number) => Math.max(0, Math.min(Math.max(0, count - 1), i))
const resolve = (sel: Selected, ids: readonly string[]) => {
  const at = sel.id === undefined ? -1 : ids.indexOf(sel.id)
  return at >= 0 ? at : clamp(sel.index, ids.length)
}

/**
 * A selection in a list that changes under it, held by the item's id, not its row: a new item
 * arriving above it (newest first) moves the row, never the selection.
 */
export function useSelection(ids: readonly string[]): Selection {
  const [selected, setSelected, latest] = useStateRef<Selected>({ index: 0 })
  const list = useRef(ids)
  useLayoutEffect(() => {
    list.current = ids
  })
  const index = resolve(selected, ids)
  const id = ids[index]
  // The first item shown is held by its id from then on, so the next one to arrive does not take its place.
  // Read from the refs, not this render: a key (↓) handled before this effect ran has moved the selection
  // already, and holding this render's item would undo it.
  useEffect(() => {
    const sel = latest()
    if (sel.id !== undefined && list.current.includes(sel.id)) return
    const at = resolve(sel, list.current)
    const held = list.current[at]
    if (held !== undefined) setSelected({ id: held, index: at })
  }, [id, index, latest, setSelected])
  const current = () => resolve(latest(), list.current)
  return {
    index,
    move: (delta) => {
      const i = clamp(current() + delta, list.current.length)
      setSelected({ id: list.current[i], index: i })
    },
    current,
  }
}
