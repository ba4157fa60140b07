/** GET /api/customers/{id}: the enrichment endpoint, a small customer table; an unknown id is 404. */
import { AppException, defineFunction } from '@gatehouse/functions';

const customers: Readonly<Record<string, { name: string; tier: string; city: string }>> = {
  'c-1': { name: 'Ada Lovelace', tier: 'gold', city: 'London' },
  'c-2': { name: 'Grace Hopper', tier: 'silver', city: 'New York' },
  'c-3': { name: 'Alan Turing', tier: 'bronze', city: 'Manchester' },
};

export default defineFunction({
  route: 'customer.directory',
  handleEvent: (_headers, request) => {
    const id = request.getPathParameter('id') ?? '';
    const customer = Object.hasOwn(customers, id) ? customers[id] : undefined;
    if (customer === undefined) throw new AppException(404, `no customer ${id}`);
    return { id, ...customer };
  },
});
