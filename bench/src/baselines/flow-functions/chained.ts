/** Flows benchmark baseline: the three steps chained in one function. */
import { defineFunction } from '@gatehouse/functions';
import { step1, step2, step3 } from './lib/steps.ts';

export default defineFunction({
  route: 'bench.chained',
  instances: 200,
  handleEvent: (_headers, request) => step3(step2(step1({ n: request.getQueryParameter('n') }))),
});
