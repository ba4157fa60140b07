/** Flows benchmark task: step 1. */
import { defineFunction } from '@gatehouse/functions';
import { type Body, step1 } from './lib/steps.ts';

export default defineFunction({
  route: 'bench.step1',
  instances: 200,
  handleEvent: (_headers, input) => step1(input as unknown as Body),
});
