/** GET /api/slow?ms=1500: answers after a delay, to show the endpoint timeout (408). */
import { defineFunction } from '@gatehouse/functions';

export default defineFunction({
  route: 'hello.slow',
  handleEvent: async (_headers, request) => {
    const ms = Number(request.getQueryParameter('ms') ?? '1500');
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { waited: ms };
  },
});
