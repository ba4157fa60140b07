/** GET /api/hello/world: the smallest function, a JSON object. */
import { defineFunction } from '@gatehouse/functions';

export default defineFunction({
  route: 'hello.world',
  instances: 200,
  handleEvent: () => ({ hello: 'world' }),
});
