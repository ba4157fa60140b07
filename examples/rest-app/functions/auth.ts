/**
 * Authentication functions. `v1.api.auth` accepts `Authorization: Bearer demo` and hands the
 * target session information (user, role); it rejects everything else. `v1.deny.all` rejects all.
 */
import { AppException, defineFunction, EventEnvelope } from '@gatehouse/functions';

export default [
  defineFunction({
    route: 'v1.api.auth',
    handleEvent: (_headers, request) => {
      const authorization = request.getHeader('authorization');
      if (authorization === 'Bearer blocked') throw new AppException(403, 'This account is blocked');
      if (authorization !== 'Bearer demo') return false;
      return new EventEnvelope().setBody(true).setHeader('user', 'demo').setHeader('role', 'reader');
    },
  }),
  defineFunction({ route: 'v1.deny.all', handleEvent: () => false }),
];
