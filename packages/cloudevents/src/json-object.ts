/**
 * Whether a value is a JSON object: not null, not an array and not a Buffer (a binary message's
 * payload, which typeof also calls an object). Validation, the JSON format, wrapping and the `gw`
 * functions all ask it, so it belongs to none of them.
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}
