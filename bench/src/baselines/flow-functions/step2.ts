/** Flows benchmark task: step 2. */
import { defineFunction } from '@gatehouse/functions';
import { type Body, step2 } from './lib/steps.ts';

export default defineFunction({
  route: 'bench.step2',
  instances: 200,
  handleEvent: (_headers, input) => step2(input as unknown as Body),
});
