/** GET /api/error/{status}: rejects the request with that status and a message (`?message=`). */
import { AppException, defineFunction } from '@gatehouse/functions';

export default defineFunction({
  route: 'hello.error',
  handleEvent: (_headers, request) => {
    const status = Number(request.getPathParameter('status'));
    const message = request.getQueryParameter('message') ?? 'Demo failure';
    if (status === 500) throw new Error(message);
    throw new AppException(
      Number.isInteger(status) && status >= 400 && status <= 599 ? status : 400,
      message,
    );
  },
});
