/** Flow task `flow.compute`: sum and product of `a` and `b` (numbers or numeric text). */
import { AppException, defineFunction } from '@gatehouse/functions';

export default defineFunction({
  route: 'flow.compute',
  handleEvent: (_headers, input) => {
    const body = input as unknown as Record<string, unknown>;
    const a = Number(body['a']);
    const b = Number(body['b']);
    if (!Number.isFinite(a) || !Number.isFinite(b)) throw new AppException(400, 'a and b must be numbers');
    return { a, b, sum: a + b, product: a * b };
  },
});
