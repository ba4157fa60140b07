/** Flow task `flow.compute`: sum and product of `a` and `b` (numbers or numeric text). */
import { AppException, defineFunction, type TaskBody } from '@gatehouse/functions';

export default defineFunction<TaskBody>({
  route: 'flow.compute',
  handleEvent: (_headers, body) => {
    const a = Number(body['a']);
    const b = Number(body['b']);
    if (!Number.isFinite(a) || !Number.isFinite(b)) throw new AppException(400, 'a and b must be numbers');
    return { a, b, sum: a + b, product: a * b };
  },
});
