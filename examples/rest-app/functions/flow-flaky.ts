/**
 * Flow task `flow.flaky`: fails with `status` until the attempt number (`attempt`, counted by the
 * flow) reaches `succeed_at`, then answers `{attempt}` — for the retry examples.
 */
import { AppException, defineFunction, type TaskBody } from '@gatehouse/functions';

export default defineFunction<TaskBody>({
  route: 'flow.flaky',
  handleEvent: (_headers, body) => {
    const attempt = Number(body['attempt'] ?? 0);
    if (attempt < Number(body['succeed_at'] ?? 1)) {
      throw new AppException(Number(body['status'] ?? 503), `Attempt ${attempt} failed`);
    }
    return { attempt };
  },
});
