/**
 * What `promise` settles to, or `late` once `ms` have passed without it (the timer cleared either way). A
 * rejection of `promise` within the time rejects the answer.
 */
export function within<T, L>(promise: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const lapse = new Promise<L>((resolve) => (timer = setTimeout(() => resolve(late), ms)))
  return Promise.race([promise, lapse]).finally(() => clearTimeout(timer))
}
