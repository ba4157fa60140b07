/**
 * Filter in front of the static HTML pages: adds a header to every page, sends visitors of
 * /protected.html without a `session` cookie to /login.html, and refuses /forbidden.html.
 */
import { AppException, defineFunction, EventEnvelope } from '@gatehouse/functions';

export default defineFunction({
  route: 'http.request.filter',
  handleEvent: (_headers, request) => {
    const url = request.getUrl();
    if (url === '/forbidden.html') throw new AppException(403, 'This page is not for you');
    if (url === '/protected.html' && request.getCookie('session') === undefined) {
      return new EventEnvelope().setStatus(302).setHeader('Location', '/login.html');
    }
    return new EventEnvelope().setHeader('X-Filter', 'demo').setHeader('X-Frame-Options', 'DENY');
  },
});
