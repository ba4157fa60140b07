/** Flows benchmark task: step 3. */
import { defineFunction } from '@gatehouse/functions';
import { type Body, step3 } from './lib/steps.ts';

export default defineFunction({
  route: 'bench.step3',
  instances: 200,
  handleEvent: (_headers, input) => step3(input as unknown as Body),
});
