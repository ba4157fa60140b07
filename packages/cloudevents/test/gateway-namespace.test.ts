import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewayNamespaceProblems, isGatewayEventType, isGatewaySource } from '../src/index.ts';

describe('the gateway namespace', () => {
  it('reserves gw.… types as the laxest reader would read them, and not the bare gw', () => {
    for (const type of ['gw.session_killed', 'GW.x', 'Gw.', ' gw.x ', '\tgw.x', 'ｇｗ.x', 'gw\uFF0Ex'])
      assert.equal(isGatewayEventType(type), true, JSON.stringify(type));
    for (const type of ['gw', 'gw-outbound', 'gwx.y', 'order.gw.x', 'g w.x', 'proxy.request', 42])
      assert.equal(isGatewayEventType(type), false, JSON.stringify(type));
  });

  it('reserves the source gatehouse in any case, and nothing around it', () => {
    for (const source of ['gatehouse', 'GateHouse', ' gatehouse\n', 'ｇａｔｅｈｏｕｓｅ'])
      assert.equal(isGatewaySource(source), true, JSON.stringify(source));
    for (const source of ['gw', '/gw', 'gatehouse/x', 'my-gatehouse', undefined])
      assert.equal(isGatewaySource(source), false, JSON.stringify(source));
  });

  it('names each reserved attribute with the rule reserved', () => {
    assert.deepEqual(
      gatewayNamespaceProblems({ type: 'gw.session_killed', source: 'gatehouse' }).map((p) => [
        p.attribute,
        p.rule,
      ]),
      [
        ['type', 'reserved'],
        ['source', 'reserved'],
      ],
    );
    assert.match(
      gatewayNamespaceProblems({ type: 'gw.x', source: 's' })[0]!.message,
      /^'type' "gw\.x" is reserved: /,
    );
    assert.deepEqual(gatewayNamespaceProblems({ type: 'order', source: 's' }), []);
  });
});
