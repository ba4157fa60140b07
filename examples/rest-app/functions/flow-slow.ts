/** Flow task `flow.slow`: answers `{slept}` after `ms` milliseconds (time-out examples). */
import { defineFunction } from '@gatehouse/functions';

export default defineFunction({
  route: 'flow.slow',
  handleEvent: async (_headers, input) => {
    const body = input as unknown as Record<string, unknown>;
    const ms = Math.min(Number(body['ms'] ?? 0) || 0, 30_000);
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { slept: ms, id: body['id'] ?? null };
  },
});
