// The operator console: its page and files, the metrics stream, the test event.
export { createConsoleFiles } from './console-files.ts';
export { createDashboard } from './dashboard.ts';
export { createTestEvent } from './test-event.ts';
