/**
 * Error bodies in the caller's preferred format: `{"message","type":"error","status"}` as JSON, the
 * same fields as XML under Mercury's `<root>` element, or a small HTML page with the message
 * HTML-escaped.
 */
import { contentTypeOf, type Format, preferredFormat } from './content-negotiation.ts';
import { escapeXml, toXml } from './xml.ts';

export interface RenderedError {
  contentType: string;
  body: string;
}

export function renderError(status: number, message: string, accept: string | undefined): RenderedError {
  const format: Format = preferredFormat(accept);
  return { contentType: contentTypeOf[format], body: errorBody(format, status, message) };
}

function errorBody(format: Format, status: number, message: string): string {
  if (format === 'xml') return toXml({ message, status, type: 'error' }, 'root');
  if (format === 'html') return errorPage(status, message);
  return JSON.stringify({ message, type: 'error', status });
}

function errorPage(status: number, message: string): string {
  const warning =
    status >= 500
      ? 'Something may be broken'
      : status >= 400
        ? 'The system is unable to process your request'
        : 'There may be a problem in processing your request';
  return `<!DOCTYPE html>
<html lang="en">
<head>
    <title>HTTP Error</title>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
</head>
<body>

<div>
    <h3>HTTP-${status}</h3>
    <div>${warning}</div><br/>
    <table>
        <tbody>
        <tr><td style="font-style: italic; width: 100px">Type</td><td>error</td></tr>
        <tr><td style="font-style: italic; width: 100px">Status</td><td>${status}</td></tr>
        <tr><td style="font-style: italic; width: 100px">Message</td><td>${escapeXml(message)}</td></tr>
        </tbody>
    </table>

</div>
</body>
</html>`;
}

/** The standard reason phrase messages the engine uses for its own errors. */
export const errorMessages = {
  notFound: 'Resource not found',
  methodNotAllowed: 'Method not allowed',
  unauthorized: 'Unauthorized',
  badPath: 'Invalid URL path',
} as const;
