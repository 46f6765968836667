/** The part of autocannon's API the benchmarks use (the package ships no types). */
declare module "autocannon" {
  interface Options {
    readonly url: string
    readonly connections?: number
    readonly duration?: number
    readonly headers?: Record<string, string>
    readonly method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
    readonly body?: string
  }
  interface Histogram {
    readonly average: number
    readonly p50: number
    readonly p99: number
  }
  interface Result {
    readonly requests: Histogram & { readonly total: number }
    readonly latency: Histogram
    readonly non2xx: number
    readonly errors: number
    readonly timeouts: number
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
