/**
 * A secondary listener: `hello.audit` gets a copy of each POST /api/audit request (its answer is
 * ignored) and remembers the last one; `hello.audit.last` shows it.
 */
import { defineFunction } from '@gatehouse/functions';

let last: { body: unknown; correlationId: string | undefined; at: string } | undefined;

export default [
  defineFunction({
    route: 'hello.audit',
    handleEvent: (headers, request) => {
      last = {
        body: request.getBody(),
        correlationId: headers['my_correlation_id'],
        at: new Date().toISOString(),
      };
      return 'ignored';
    },
  }),
  defineFunction({ route: 'hello.audit.last', handleEvent: () => last ?? {} }),
];
