/** Flows benchmark task: the right branch of the fork. */
import { defineFunction } from '@gatehouse/functions';
import { type Body, right } from './lib/steps.ts';

export default defineFunction({
  route: 'bench.right',
  instances: 200,
  handleEvent: (_headers, input) => right(input as unknown as Body),
});
