/**
 * The part of a test run's output that says why it failed, short enough for the end of a CI log
 * (which is often all that is kept of it): node's spec reporter ends with a "✖ failing tests:"
 * section naming each failing test with its error. Of each, this keeps where the test is, its name
 * and the first lines of its message; the stack and the error's properties, which fill a CI log's
 * last lines and say little, are left out. Without such a section (a file killed, a script that
 * failed before its tests), the last lines.
 */
const failingTests = '✖ failing tests:';
/** Lines of a failing test's message kept (a pod's log in it can be dozens). */
const messageLines = 6;

export function failureExcerpt(text: string, maxLines = 40): string {
  const at = text.lastIndexOf(failingTests);
  if (at < 0) {
    const lines = text.trimEnd().split('\n');
    const kept = lines.slice(-maxLines);
    const cut = lines.length - kept.length;
    return (cut > 0 ? [`[… ${cut} lines before]`, ...kept] : kept).join('\n');
  }
  const tests = failingTestsOf(text.slice(at + failingTests.length));
  const kept = [failingTests];
  let shown = 0;
  for (const test of tests) {
    if (kept.length + test.length > maxLines) break;
    kept.push(...test);
    shown++;
  }
  if (shown < tests.length) kept.push(`[… ${tests.length - shown} more failing tests]`);
  return kept.join('\n');
}

/** Each failing test's lines: "test at …" (when given), "✖ name", then its message's first lines. */
function failingTestsOf(section: string): string[][] {
  const tests: string[][] = [];
  let test: string[] | undefined;
  let message: string[] = [];
  let inStack = false;
  const end = () => {
    if (!test) return;
    test.push(...message.slice(0, messageLines));
    if (message.length > messageLines)
      test.push(`  [… ${message.length - messageLines} more lines of its message]`);
  };
  for (const line of section.split('\n')) {
    if (line.startsWith('test at ') || (line.startsWith('✖ ') && !test?.at(-1)?.startsWith('test at '))) {
      end();
      test = [];
      tests.push(test);
      message = [];
      inStack = false;
    }
    if (!test) continue;
    if (line.startsWith('test at ') || line.startsWith('✖ ')) test.push(line);
    else if (/^\s+at /.test(line)) inStack = true;
    else if (!inStack && line.trim() !== '') message.push(line);
  }
  end();
  return tests;
}

/** Whether a log holds a failing test (node's spec reporter's summary of them). */
export const hasFailingTests = (text: string) => text.includes(failingTests);
