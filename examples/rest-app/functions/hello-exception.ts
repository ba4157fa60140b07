/** Flow task `v1.hello.exception` (Mercury's test flows): turns `error.*` into an error answer. */
import { defineFunction, type TaskBody } from '@gatehouse/functions';

export default defineFunction<TaskBody>({
  route: 'v1.hello.exception',
  handleEvent: (_headers, body) => {
    return { type: 'error', status: body['status'] ?? 500, message: body['message'] ?? null };
  },
});
