// Requests and answers: bodies, query strings, cookies, XML, the preferred format, errors, the writer.
export { type MultipartLimits, readRequestBody } from './body-reader.ts';
export { parseCookies } from './cookies.ts';
export { errorMessages } from './error-renderer.ts';
export { exceedsParameters, parseQueryString, queryMap, tooManyParameters } from './query-string.ts';
export { type ResponseTarget, writeError, writeResult } from './response-writer.ts';
