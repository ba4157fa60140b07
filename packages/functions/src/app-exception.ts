/**
 * The error a function throws to reject a request with a chosen HTTP status: the engine answers
 * with that status and message (as JSON, XML or HTML, by the caller's Accept header).
 */
const appExceptionMark = Symbol.for('gatehouse.functions.AppException');

export class AppException extends Error {
  readonly status: number;
  readonly [appExceptionMark] = true;

  constructor(status: number, message: string) {
    super(message);
    if (!Number.isInteger(status) || status < 100 || status > 599) {
      throw new RangeError(`AppException status must be an HTTP status (100-599), got ${status}`);
    }
    this.name = 'AppException';
    this.status = status;
  }
}

/**
 * True for an AppException, also one made by another copy of this module (a function folder that
 * resolved the SDK elsewhere), which `instanceof` would miss.
 */
export function isAppException(value: unknown): value is AppException {
  return value instanceof AppException || (value instanceof Error && appExceptionMark in value);
}
