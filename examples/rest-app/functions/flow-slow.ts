/** Flow task `flow.slow`: answers `{slept}` after `ms` milliseconds (time-out examples). */
import { defineFunction, type TaskBody } from '@gatehouse/functions';

export default defineFunction<TaskBody>({
  route: 'flow.slow',
  handleEvent: async (_headers, body) => {
    const ms = Math.min(Number(body['ms'] ?? 0) || 0, 30_000);
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { slept: ms, id: body['id'] ?? null };
  },
});
