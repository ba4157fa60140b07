/** Second-level routing rules (Mercury's grammar) on records as the adapters make them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseFlow, compileRoutingRules } from '../../src/flow-adapters/routing-rules.ts';

const rules = compileRoutingRules([
  'input.header.type(order) -> flow://exact',
  'input.header.type(order-*) -> flow://wildcard',
  'input.header.type(regex: shipment-(eu|us)) -> flow://regex',
  'input.body[0].kind(listed) -> flow://list',
  'input.body.items[1].kind(second) -> flow://nested',
  'default -> flow://fallback',
]);
const pick = (headers: Record<string, string>, body: unknown = null) => chooseFlow(rules, { headers, body });

describe('routing rules', () => {
  it('matches exactly, by wildcard and by regex, the first match winning', () => {
    assert.equal(pick({ type: 'order' }), 'exact');
    assert.equal(pick({ type: 'order-7' }), 'wildcard');
    assert.equal(pick({ type: 'shipment-eu' }), 'regex');
  });

  it('matches whole values only, case-sensitively', () => {
    assert.equal(pick({ type: 'my-shipment-eu' }), 'fallback');
    assert.equal(pick({ type: 'shipment-eu-1' }), 'fallback');
    assert.equal(pick({ type: 'Order' }), 'fallback');
  });

  it('reads list and nested body paths; a missing or non-text value is no match', () => {
    assert.equal(pick({}, [{ kind: 'listed' }]), 'list');
    assert.equal(pick({}, { items: [{}, { kind: 'second' }] }), 'nested');
    assert.equal(pick({}, { items: [{}, { kind: 2 }] }), 'fallback');
    assert.equal(pick({}, Buffer.from('[{"kind":"listed"}]')), 'fallback');
    assert.equal(pick({}, { __proto__: { kind: 'listed' } }), 'fallback');
  });

  it('lists every flow a record may go to', () => {
    assert.deepEqual([...rules.flows].sort(), ['exact', 'fallback', 'list', 'nested', 'regex', 'wildcard']);
  });
});
