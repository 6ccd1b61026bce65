// Did-you-mean for every typed name: commands, flags, --flow presets, providers and shipped fixtures
// (src/), kit calls, fields and phases in a fixture and Lua plugin config fields (pdk/). Here because pdk/ is the lowest layer both may import (pdk/ never imports src/).

/** The word of `known` closest to `typed` by edit distance, when it is close enough to be a typo. */
export function closest(typed: string, known: Iterable<string>): string | undefined {
  let best: { id: string; distance: number } | undefined
  for (const id of known) {
    const distance = editDistance(typed, id)
    if (!best || distance < best.distance) best = { id, distance }
  }
  // A third of the word may be wrong (stroe → store is 2 of 5); farther is another word.
  return best && best.distance <= Math.max(2, Math.floor(typed.length / 3)) ? best.id : undefined
}

/**
 * Ours rather than a library's: fast-levenshtein (what @oclif/plugin-not-found uses) counts a swap as
 * two edits, so `stroe` is as close to `serve` as to `store`.
 * Edit distance counting a swap of two neighbours as one edit (optimal string alignment), since
 * swapped letters are the commonest typo: `stroe` is 1 from `store` but 2 from `serve`.
 */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const row = d[i]!
      const up = d[i - 1]!
      row[j] = Math.min(up[j]! + 1, row[j - 1]! + 1, up[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1)
    }
  }
  return d[a.length]![b.length]!
}
