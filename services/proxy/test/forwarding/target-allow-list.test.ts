import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TargetAllowList, targetAllowSetting } from '../../src/forwarding/target-allow-list.ts';

describe('TargetAllowList (PROXY_TARGET_ALLOW)', () => {
  const none = new TargetAllowList();

  it('lets public unicast addresses through and refuses every special range by default', () => {
    for (const address of ['93.184.216.34', '2606:4700::1111'])
      assert.equal(none.refusalOfAddress('backend.example', address), undefined, address);
    for (const [address, range] of [
      ['127.0.0.53', 'a loopback'],
      ['::1', 'a loopback'],
      ['::ffff:127.0.0.1', 'a loopback'],
      ['169.254.169.254', 'a link-local'],
      ['fe80::1', 'a link-local'],
      ['10.0.0.1', 'a private'],
      ['172.16.5.4', 'a private'],
      ['192.168.1.1', 'a private'],
      ['fd12:3456::1', 'a private (unique local)'],
      ['100.64.0.1', 'a shared (carrier-grade NAT)'],
      ['0.0.0.0', 'an unspecified'],
      ['224.0.0.1', 'a special-purpose (multicast)'],
      ['64:ff9b::7f00:1', 'a special-purpose (rfc6052)'],
    ] as const)
      assert.match(
        none.refusalOfAddress('backend.example', address) ?? '',
        new RegExp(`is ${literal(range)}`),
      );
  });

  it('judges literals and localhost as written, other names only once resolved', () => {
    assert.match(none.refusalOfHost('[::1]') ?? '', /::1 is a loopback address/);
    assert.match(none.refusalOfHost('LOCALHOST.') ?? '', /localhost is a loopback name/);
    assert.match(none.refusalOfHost('api.localhost') ?? '', /loopback name/);
    assert.equal(none.refusalOfHost('redis.internal'), undefined);
  });

  it('lets in CIDRs, addresses, names and subdomains, and * for everything', () => {
    const list = new TargetAllowList(['10.20.0.0/16', '::1', 'rest-engine', '*.shop.svc.cluster.local']);
    assert.equal(list.refusalOfAddress('x', '10.20.3.4'), undefined);
    assert.match(list.refusalOfAddress('x', '10.21.3.4') ?? '', /private/);
    assert.equal(list.refusalOfAddress('x', '::1'), undefined);
    assert.match(list.refusalOfAddress('x', '127.0.0.1') ?? '', /loopback/, 'IPv6 ::1 does not let IPv4 in');
    assert.equal(list.refusalOfAddress('REST-ENGINE', '10.96.0.7'), undefined, 'a listed name, any address');
    assert.equal(list.refusalOfAddress('orders.shop.svc.cluster.local', '10.96.0.8'), undefined);
    assert.match(list.refusalOfAddress('shop.svc.cluster.local', '10.96.0.9') ?? '', /private/);
    assert.equal(list.refusalOfHost('rest-engine'), undefined);
    const all = new TargetAllowList(['*']);
    assert.equal(all.refusalOfAddress('x', '169.254.169.254'), undefined);
    assert.equal(all.refusalOfHost('localhost'), undefined);
  });

  it('refuses an entry that is none of those, naming it', () => {
    const setting = targetAllowSetting();
    assert.deepEqual(setting.parse('10.0.0.0/8, rest-engine'), ['10.0.0.0/8', 'rest-engine']);
    assert.deepEqual(setting.parse(undefined), []);
    for (const bad of ['http://x/', '10.0.0.0/33', '*.', 'a b'])
      assert.throws(() => setting.parse(bad), new RegExp(literal(JSON.stringify(bad))), bad);
  });
});

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
