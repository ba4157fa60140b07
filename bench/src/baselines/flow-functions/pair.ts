/** Flows benchmark baseline: both fork branches in one function. */
import { defineFunction } from '@gatehouse/functions';
import { left, right } from './lib/steps.ts';

export default defineFunction({
  route: 'bench.pair',
  instances: 200,
  handleEvent: (_headers, request) => {
    const n = request.getQueryParameter('n');
    return { ...left({ n }), ...right({ n }) };
  },
});
