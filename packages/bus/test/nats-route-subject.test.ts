/** The subject of a routed message: one token per route, never shared by two routes, bounded. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_ROUTE_TOKEN, noRouteSubject, routedSubjects, routeSubject } from '../src/nats-route-subject.ts';

const tokenOf = (route: string) => routeSubject('gw.events', route)?.slice('gw.events.~t.'.length);

describe('routed subjects', () => {
  it('writes a route as one token of the characters a subject allows, readable where it can be', () => {
    assert.equal(routeSubject('gw.events', 'order_created-v2'), 'gw.events.~t.order_created-v2');
    assert.equal(tokenOf('com.example.order'), 'com~2Eexample~2Eorder');
    assert.equal(tokenOf('a b*>~é'), 'a~20b~2A~3E~7E~C3~A9');
    assert.equal(tokenOf(''), '~');
  });

  it('gives two routes two tokens, each one token of allowed characters, none the unused subject', () => {
    // Tricky ones, then every string of up to two characters over an alphabet of edge cases.
    const alphabet = ['a', 'Z', '0', '-', '_', '.', '*', '>', '~', ' ', '\t', 'é', '😀', '%', '2', 'E'];
    const routes = ['', '~', '~2E', '.', '~none', 'none', 'com.example', 'com~2Eexample'];
    for (const x of alphabet) for (const y of ['', ...alphabet]) routes.push(x + y);
    const seen = new Map<string, string>();
    for (const route of new Set(routes)) {
      const token = tokenOf(route)!;
      assert.match(token, /^[A-Za-z0-9_~-]+$/, JSON.stringify(route));
      assert.notEqual(token, '~none');
      assert.equal(
        seen.get(token),
        undefined,
        `${JSON.stringify(route)} and ${JSON.stringify(seen.get(token))}`,
      );
      seen.set(token, route);
    }
    assert.equal(routedSubjects('gw.events'), 'gw.events.~t.*');
    assert.equal(noRouteSubject('gw.events'), 'gw.events.~t.~none');
  });

  it('leaves a route whose token would be longer than the bound unrouted', () => {
    assert.equal(tokenOf('x'.repeat(MAX_ROUTE_TOKEN))?.length, MAX_ROUTE_TOKEN);
    assert.equal(routeSubject('gw.events', 'x'.repeat(MAX_ROUTE_TOKEN + 1)), undefined);
    assert.equal(routeSubject('gw.events', 'é'.repeat(MAX_ROUTE_TOKEN / 4)), undefined);
  });
});
