/** What mercury.bench.ts writes with `--json` and the report reads (report/mercury-section.ts). */

export interface RowResult {
  rps: number[];
  cpuUs: number[];
  p99: number[];
  errors: number;
}
export interface ServerResult {
  load: [number, number];
  idleRssMiB: number;
  loadRssMiB: number;
  /** Total rate over every row of each warm-up round, req/s: where it stops improving. */
  warmup: number[];
  rows: Record<string, RowResult>;
}
export interface MercuryJson {
  box: string;
  java: string;
  load: [number, number];
  rounds: number;
  blocks: Array<{
    id: string;
    cores: number;
    rows: Array<{ id: string; what: string }>;
    servers: Partial<Record<'gatehouse' | 'gatehouse-base' | 'mercury', ServerResult>>;
  }>;
}
