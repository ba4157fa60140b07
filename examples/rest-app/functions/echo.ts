/** Shows the function what it received: the request, the event headers and its instance number. */
import { defineFunction } from '@gatehouse/functions';

export default defineFunction({
  route: 'hello.echo',
  instances: 50,
  handleEvent: (headers, request, instance) => {
    const body = request.getBody();
    return {
      method: request.getMethod(),
      url: request.getUrl(),
      ip: request.getRemoteIp(),
      https: request.isHttps(),
      headers: request.getHeaders(),
      path_parameters: request.getPathParameters(),
      query: request.getQueryParameters(),
      query_string: request.getQueryString(),
      cookies: request.getCookies(),
      session: request.getSessionInfo(),
      content_length: request.getContentLength(),
      body_type: Buffer.isBuffer(body)
        ? 'bytes'
        : Array.isArray(body)
          ? 'list'
          : body === null
            ? 'null'
            : typeof body,
      body: Buffer.isBuffer(body) ? body.toString('base64') : body,
      files: request.getFiles().map((f) => ({
        field: f.fieldName,
        name: f.fileName,
        type: f.contentType,
        size: f.size,
        text: f.data.toString('utf8'),
      })),
      stream: request.getStreamRoute() !== undefined,
      event_headers: headers,
      instance,
    };
  },
});
