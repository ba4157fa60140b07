/**
 * Flow adapter benchmark: the last task of the three-task flow notes how long ago the record was
 * produced (its `bench-sent-at` header, ms since the epoch, same box); `GET /stats` (bench.stats)
 * hands the notes over and starts afresh.
 */
import { defineFunction } from '@gatehouse/functions';

let latenciesMs: number[] = [];
let count = 0;

export default [
  defineFunction({
    route: 'bench.adapter.mark',
    instances: 200,
    handleEvent: (_headers, input) => {
      count++;
      const sent = Number((input as unknown as { sent?: string }).sent);
      if (Number.isFinite(sent) && sent > 0) latenciesMs.push(Date.now() - sent);
      return null;
    },
  }),
  defineFunction({
    route: 'bench.adapter.stats',
    handleEvent: () => {
      const answer = { count, latenciesMs };
      latenciesMs = [];
      count = 0;
      return answer;
    },
  }),
];
