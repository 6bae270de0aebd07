// The few parts of autocannon's API the benchmark uses.
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
  }
  interface Result {
    requests: Histogram & { total: number };
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
    duration: number;
    statusCodeStats: Record<string, { count: number }>;
  }
  interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    requests?: { method?: string; path?: string; setupRequest?: (req: RawRequest) => RawRequest }[];
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
