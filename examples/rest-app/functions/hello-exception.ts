/** Flow task `v1.hello.exception` (Mercury's test flows): turns `error.*` into an error answer. */
import { defineFunction } from '@gatehouse/functions';

export default defineFunction({
  route: 'v1.hello.exception',
  handleEvent: (_headers, input) => {
    const body = input as unknown as Record<string, unknown>;
    return { type: 'error', status: body['status'] ?? 500, message: body['message'] ?? null };
  },
});
