/**
 * Lower case for the letters A–Z only. Routing ignores case (Mercury's behaviour), but Unicode's
 * `toLowerCase` turns KELVIN SIGN (U+212A) into `k`: `/api/coo%E2%84%AAies` would route to
 * `/api/cookies` while the proxy, which matches the canonical (still escaped) path, took it for
 * another endpoint and skipped that endpoint's token check. Folding ASCII only, no other character
 * becomes a letter of a url written in rest.yaml.
 */
export function asciiLowerCase(text: string): string {
  return /[A-Z]/.test(text) ? text.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32)) : text;
}
