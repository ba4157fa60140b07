/** Flows benchmark task: the left branch of the fork. */
import { defineFunction } from '@gatehouse/functions';
import { type Body, left } from './lib/steps.ts';

export default defineFunction({
  route: 'bench.left',
  instances: 200,
  handleEvent: (_headers, input) => left(input as unknown as Body),
});
