/** GET /api/cookies: sets two cookies and answers with its own content type. */
import { defineFunction, EventEnvelope } from '@gatehouse/functions';

/** A cookie is the client's text: written into HTML, it is escaped, or a page could run its script. */
const htmlEscapes: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => htmlEscapes[c]!);

export default defineFunction({
  route: 'hello.cookies',
  handleEvent: (_headers, request) =>
    new EventEnvelope()
      .setStatus(201)
      .addHeader('Set-Cookie', 'session=abc123; Path=/; HttpOnly')
      .addHeader('Set-Cookie', 'theme=dark; Path=/')
      .setHeader('Content-Type', 'text/html; charset=utf-8')
      .setBody(`<p>hello ${escapeHtml(request.getCookie('name') ?? 'stranger')}</p>`),
});
