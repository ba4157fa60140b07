/**
 * Preloaded into a child process (`node --import <this file>`) with LOADED_MODULES_FILE set: appends
 * the URL of every module the process loads, ESM and CommonJS alike, one per line, as it loads it.
 * Tests read the file to tell which libraries a started service pulled in.
 */
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const file = process.env['LOADED_MODULES_FILE'];
if (file === undefined) throw new Error('loaded-modules-recorder: set LOADED_MODULES_FILE');

registerHooks({
  load(url, context, nextLoad) {
    appendFileSync(file, `${url}\n`);
    return nextLoad(url, context);
  },
});
