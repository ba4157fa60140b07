import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeAuthorizationProblem, parseAuthorizationHeader } from '../src/index.ts';

const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln';

describe('Authorization header', () => {
  it('reads a Bearer token', () => {
    const parsed = parseAuthorizationHeader(`Bearer ${jwt}`);
    assert.deepEqual(parsed, {
      bearerTokens: [jwt],
      missingScheme: false,
      missingToken: false,
      otherSchemes: [],
    });
    assert.equal(describeAuthorizationProblem(parsed), undefined);
  });

  it('compares the scheme case-insensitively', () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr'])
      assert.deepEqual(parseAuthorizationHeader(`${scheme} ${jwt}`).bearerTokens, [jwt], scheme);
  });

  it('reads every credential of comma-separated and repeated headers, in order', () => {
    const parsed = parseAuthorizationHeader(['Bearer a.b.c, Bearer d.e.f', 'bearer g.h.i']);
    assert.deepEqual(parsed.bearerTokens, ['a.b.c', 'd.e.f', 'g.h.i']);
  });

  it('never takes a token without a scheme for a bearer token', () => {
    const parsed = parseAuthorizationHeader(jwt);
    assert.deepEqual(parsed.bearerTokens, []);
    assert.equal(parsed.missingScheme, true);
    assert.match(describeAuthorizationProblem(parsed)!, /without a scheme/);
    const mixed = parseAuthorizationHeader(`Bearer a.b.c, ${jwt}`);
    assert.deepEqual(mixed.bearerTokens, ['a.b.c']);
    assert.equal(mixed.missingScheme, true);
  });

  it('ignores other schemes but names them', () => {
    const parsed = parseAuthorizationHeader(['Basic dXNlcjpwYXNz', 'Negotiate']);
    assert.deepEqual(parsed.bearerTokens, []);
    assert.deepEqual(parsed.otherSchemes, ['basic', 'negotiate']);
    assert.equal(parsed.missingScheme, false);
  });

  it('keeps auth-params (with quoted commas) with their credential', () => {
    const parsed = parseAuthorizationHeader(
      `Digest username="a, b", realm="x\\"y, z", nonce=abc, Bearer ${jwt}, Basic Zm9v`,
    );
    assert.deepEqual(parsed.bearerTokens, [jwt]);
    assert.deepEqual(parsed.otherSchemes, ['digest', 'basic']);
    assert.equal(parsed.missingScheme, false);
  });

  it('reports Bearer without a token', () => {
    const parsed = parseAuthorizationHeader('Bearer');
    assert.deepEqual(parsed.bearerTokens, []);
    assert.equal(parsed.missingToken, true);
    assert.match(describeAuthorizationProblem(parsed)!, /without a token/);
    assert.equal(parseAuthorizationHeader('Bearer   ').missingToken, true);
  });

  it('tolerates extra whitespace and empty list items', () => {
    const parsed = parseAuthorizationHeader(`  Bearer \t ${jwt}  ,, ,Bearer x.y.z`);
    assert.deepEqual(parsed.bearerTokens, [jwt, 'x.y.z']);
    assert.equal(parsed.missingScheme, false);
  });

  it('reads nothing from an absent or empty header', () => {
    for (const value of [undefined, '', [], ['', ' , ']]) {
      const parsed = parseAuthorizationHeader(value);
      assert.deepEqual(parsed.bearerTokens, []);
      assert.equal(parsed.missingScheme, false);
      assert.equal(describeAuthorizationProblem(parsed), undefined);
    }
  });

  it('hands a token with inner spaces to the verifier as it is', () => {
    assert.deepEqual(parseAuthorizationHeader('Bearer a b').bearerTokens, ['a b']);
  });
});
