import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseExtractorConfig } from '../../src/subscriptions/extractor-config.ts';
import { SubscriptionIndex } from '../../src/subscriptions/subscription-index.ts';

const extractors = parseExtractorConfig({
  greeting: { name: { stable_field_index: 1, event: { json_pointer: '/data/name' } } },
  'com.github.pull.create': {
    assignee: { stable_field_index: 0, event: { json_pointer: '/data/assignee/login' } },
    head_repo: { stable_field_index: 1, event: { json_pointer: '/data/head/repo' } },
    age: { stable_field_index: 2, event: { json_pointer: '/data/age' } },
  },
});

const greeting = (name: unknown) => ({ type: 'greeting', data: { name } });
const pull = (assignee: string, repo: string, age?: unknown) => ({
  type: 'com.github.pull.create',
  data: { assignee: { login: assignee }, head: { repo }, age },
});

function matches(index: SubscriptionIndex<string>, event: { type: string }): string[] {
  const out: string[] = [];
  index.match(event, (s) => out.push(s));
  return out.sort();
}

describe('subscription index', () => {
  it('matches the event type exactly, without constraints everything of that type', () => {
    const index = new SubscriptionIndex<string>(extractors);
    index.set('a', [{ eventType: 'greeting', oneOf: [] }]);
    index.set('b', [{ eventType: 'greeting.extra', oneOf: [] }]);
    assert.deepEqual(matches(index, greeting('x')), ['a']);
    assert.deepEqual(matches(index, { type: 'greet' }), []);
  });

  it("keeps each subscriber's subscriptions to a type its own, with or without constraints", () => {
    const index = new SubscriptionIndex<string>(extractors);
    index.set('all', [{ eventType: 'greeting', oneOf: [] }]);
    index.set('both', [
      { eventType: 'greeting', oneOf: [] },
      { eventType: 'greeting', oneOf: [{ name: 'x' }] },
    ]);
    index.set('only-x', [{ eventType: 'greeting', oneOf: [{ name: 'x' }] }]);
    index.set('x-then-all', [
      { eventType: 'greeting', oneOf: [{ name: 'x' }] },
      { eventType: 'greeting', oneOf: [] },
    ]);
    assert.deepEqual(matches(index, greeting('y')), ['all', 'both', 'x-then-all']);
    assert.deepEqual(matches(index, greeting('x')), ['all', 'both', 'only-x', 'x-then-all']);
    index.set('all', [
      { eventType: 'greeting', oneOf: [{ name: 'z' }] },
      { eventType: 'other', oneOf: [] },
    ]);
    assert.deepEqual(matches(index, greeting('y')), ['both', 'x-then-all']);
    assert.deepEqual(matches(index, { type: 'other' }), ['all']);
    index.remove('all');
    index.remove('both');
    assert.deepEqual(matches(index, greeting('y')), ['x-then-all']);
    assert.equal(index.size, 3);
  });

  it('reads oneOf as an OR of ANDs', () => {
    const index = new SubscriptionIndex<string>(extractors);
    index.set('c', [
      {
        eventType: 'com.github.pull.create',
        oneOf: [{ assignee: 'octocat', head_repo: 'hello' }, { head_repo: 'world' }],
      },
    ]);
    assert.deepEqual(matches(index, pull('octocat', 'hello')), ['c']);
    assert.deepEqual(matches(index, pull('octocat', 'other')), []);
    assert.deepEqual(matches(index, pull('someone', 'world')), ['c']);
    assert.deepEqual(matches(index, pull('someone', 'hello')), []);
  });

  it('compares JSON values with their types, objects by content', () => {
    const index = new SubscriptionIndex<string>(extractors);
    index.set('num', [{ eventType: 'com.github.pull.create', oneOf: [{ age: 30 }] }]);
    index.set('obj', [{ eventType: 'greeting', oneOf: [{ name: { first: 'a', last: 'b' } }] }]);
    assert.deepEqual(matches(index, pull('x', 'y', 30)), ['num']);
    assert.deepEqual(matches(index, pull('x', 'y', '30')), []);
    assert.deepEqual(matches(index, greeting({ last: 'b', first: 'a' })), ['obj']);
  });

  it('delivers once per subscriber even when several subscriptions match', () => {
    const index = new SubscriptionIndex<string>(extractors);
    index.set('a', [
      { eventType: 'greeting', oneOf: [] },
      { eventType: 'greeting', oneOf: [{ name: 'alice' }] },
    ]);
    assert.deepEqual(matches(index, greeting('alice')), ['a']);
  });

  it('a missing field only matches subscriptions that do not constrain it', () => {
    const index = new SubscriptionIndex<string>(extractors);
    index.set('constrained', [{ eventType: 'greeting', oneOf: [{ name: 'alice' }] }]);
    index.set('open', [{ eventType: 'greeting', oneOf: [] }]);
    assert.deepEqual(matches(index, { type: 'greeting', data: {} } as { type: string }), ['open']);
  });

  it('rejects a constraint on a field the extractor config does not define', () => {
    const index = new SubscriptionIndex<string>(extractors);
    assert.throws(
      () => index.set('a', [{ eventType: 'greeting', oneOf: [{ nickname: 'al' }] }]),
      /field "nickname" is not defined for event type "greeting"/,
    );
    assert.throws(() => index.validate([{ eventType: 'unknown', oneOf: [{ x: 1 }] }]), /not defined/);
  });

  it('replaces and removes a subscriber and counts subscriptions', () => {
    const index = new SubscriptionIndex<string>(extractors);
    index.set('a', [
      { eventType: 'greeting', oneOf: [] },
      { eventType: 'other', oneOf: [] },
    ]);
    assert.equal(index.size, 2);
    index.set('a', [{ eventType: 'other', oneOf: [] }]);
    assert.equal(index.size, 1);
    assert.deepEqual(matches(index, greeting('x')), []);
    index.remove('a');
    assert.equal(index.size, 0);
    assert.deepEqual(matches(index, { type: 'other' }), []);
  });

  it('builds standalone matchers and per-subscriber checks', () => {
    const index = new SubscriptionIndex<string>(extractors);
    const m = index.matcherFor([{ eventType: 'greeting', oneOf: [{ name: 'bob' }] }]);
    assert.equal(m(greeting('bob')), true);
    assert.equal(m(greeting('al')), false);
    index.set('z', [{ eventType: 'greeting', oneOf: [{ name: 'bob' }] }]);
    assert.equal(index.matches('z', greeting('bob')), true);
    assert.equal(index.matches('z', greeting('al')), false);
  });

  it('matches an event whose constrained field nests thousands of levels to no constraint, without throwing', () => {
    const index = new SubscriptionIndex<string>(extractors);
    index.set('constrained', [{ eventType: 'greeting', oneOf: [{ name: 'bob' }] }]);
    index.set('everything', [{ eventType: 'greeting', oneOf: [] }]);
    const deep = greeting(JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`));
    assert.deepEqual(matches(index, deep), ['everything']);
    assert.equal(index.matches('constrained', deep), false);
    assert.equal(index.matcherFor([{ eventType: 'greeting', oneOf: [{ name: 'bob' }] }])(deep), false);
  });

  it('refuses a constraint too deep to compare (one from a JWT claim, which no list bound checks)', () => {
    const index = new SubscriptionIndex<string>(extractors);
    const deep = JSON.parse(`${'['.repeat(5000)}${']'.repeat(5000)}`);
    assert.throws(
      () => index.validate([{ eventType: 'greeting', oneOf: [{ name: deep }] }]),
      /field "name" of event type "greeting" is constrained to a value nested too deeply to compare/,
    );
  });
});
