/** Header values as node:http gives them (repeated ones as arrays) → lower-case names, one text each. */
export function headerText(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : value;
    out[key] = out[key] === undefined ? text : `${out[key]}, ${text}`;
  }
  return out;
}
