// autocannon ships no types: the part of its API the benchmarks use.
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string
      method?: string
      body?: string
      headers?: Record<string, string>
      connections?: number
      pipelining?: number
      duration?: number
      amount?: number
    }
    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      p50: number
      p99: number
      total: number
    }
    interface Result {
      requests: Histogram
      latency: Histogram
      throughput: Histogram
      errors: number
      timeouts: number
      non2xx: number
      duration: number
    }
  }
  function autocannon (options: autocannon.Options): Promise<autocannon.Result>
  export default autocannon
}
