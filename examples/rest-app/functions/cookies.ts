/** GET /api/cookies: sets two cookies and answers with its own content type. */
import { defineFunction, EventEnvelope } from '@gatehouse/functions';

export default defineFunction({
  route: 'hello.cookies',
  handleEvent: (_headers, request) =>
    new EventEnvelope()
      .setStatus(201)
      .addHeader('Set-Cookie', 'session=abc123; Path=/; HttpOnly')
      .addHeader('Set-Cookie', 'theme=dark; Path=/')
      .setHeader('Content-Type', 'text/html; charset=utf-8')
      .setBody(`<p>hello ${request.getCookie('name') ?? 'stranger'}</p>`),
});
