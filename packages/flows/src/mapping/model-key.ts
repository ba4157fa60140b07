/**
 * Reading and writing one model key written as in a flow file (`model.n`, `model.a.b[0]`), for the
 * runner's loop counters, delay variables, dynamic fork sources and conditions.
 */
import { getPath, setPath } from './data-path.ts';

export function readModelKey(model: Record<string, unknown>, key: string): unknown {
  return getPath({ model }, key);
}

export function writeModelKey(model: Record<string, unknown>, key: string, value: unknown): void {
  setPath({ model }, key, value);
}
