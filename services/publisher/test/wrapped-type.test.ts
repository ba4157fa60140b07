import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '@gatehouse/service-kit';
import { checkWrappedTypes } from '../src/wrapped-type.ts';

describe('wrapped types', () => {
  it('refuses at start a WRAPPED_EVENT_TYPE in the gateway namespace', () => {
    assert.throws(
      () => checkWrappedTypes(['gw'], 'gw.orders'),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /WRAPPED_EVENT_TYPE "gw\.orders" is in the gateway's own namespace/);
        return true;
      },
    );
  });

  it('refuses source topics named gw.… while wrapped messages take the topic as type', () => {
    assert.throws(
      () => checkWrappedTypes(['orders', 'GW.Orders'], undefined),
      /"GW\.Orders" start with gw\./,
    );
    // With a type of their own, such topics are fine; so is the default topic `gw`.
    checkWrappedTypes(['gw.orders'], 'orders');
    checkWrappedTypes(['gw', 'gw-outbound'], undefined);
  });
});
