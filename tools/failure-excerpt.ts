/**
 * The part of a test run's output that says why it failed, short enough for the end of a CI log
 * (which is often all that is kept of it): node's spec reporter ends with a "✖ failing tests:"
 * section naming each failing test with its error; without one (a file killed, a script that
 * failed before its tests), the last lines.
 */
const failingTests = '✖ failing tests:';

export function failureExcerpt(text: string, maxLines = 40): string {
  const at = text.lastIndexOf(failingTests);
  const lines = (at >= 0 ? text.slice(at) : text).trimEnd().split('\n');
  const kept = at >= 0 ? lines.slice(0, maxLines) : lines.slice(-maxLines);
  const cut = lines.length - kept.length;
  if (cut <= 0) return kept.join('\n');
  return at >= 0
    ? [...kept, `[… ${cut} more lines]`].join('\n')
    : [`[… ${cut} lines before]`, ...kept].join('\n');
}

/** Whether a log holds a failing test (node's spec reporter's summary of them). */
export const hasFailingTests = (text: string) => text.includes(failingTests);
