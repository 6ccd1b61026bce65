// The part of autocannon's API the bench uses (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    p50: number
    p99: number
    average: number
  }
  export interface Result {
    duration: number
    latency: Histogram
    requests: Histogram & { total: number }
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
    '3xx': number
  }
  interface Instance {
    on(event: 'response', listener: () => void): void
  }
  function autocannon(options: Record<string, unknown>, done: (err: Error | null, result: Result) => void): Instance
  export default autocannon
}
