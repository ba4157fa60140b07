/**
 * One refusal text for every JWT failure: a caller learns that its token was refused, not which
 * check failed (the issuer, the audience, a blacklisted session, the signature), which would tell
 * someone forging tokens how close they came. The reason goes to the log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signJwt } from '@gatehouse/auth';
import { openSse } from '@gatehouse/testkit';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

const key = 'jwt-refusal-text-secret-of-sufficient-length';
const issuer = 'https://issuer.example/';
const audience = 'gatehouse';
const exp = () => Math.floor(Date.now() / 1000) + 600;

/** Tokens each refused for another reason. */
function refusedTokens(): Record<string, string> {
  const claims = { iss: issuer, aud: audience, exp: exp(), jti: 'ok-session' };
  return {
    signature: signJwt(claims, { alg: 'HS256', key: 'another-secret-of-sufficient-length!!' }),
    issuer: signJwt({ ...claims, iss: 'https://other.example/' }, { alg: 'HS256', key }),
    audience: signJwt({ ...claims, aud: 'someone-else' }, { alg: 'HS256', key }),
    expired: signJwt({ ...claims, exp: Math.floor(Date.now() / 1000) - 600 }, { alg: 'HS256', key }),
    'no exp': signJwt({ iss: issuer, aud: audience, jti: 'x' }, { alg: 'HS256', key }),
    blacklisted: signJwt({ ...claims, jti: 'killed-session' }, { alg: 'HS256', key }),
    malformed: 'not.a.jwt',
  };
}

describe('JWT refusals', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      JWT_SECRET_KEY: key,
      JWT_ISSUER: issuer,
      JWT_AUDIENCE: audience,
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
    const killed = await fetch(`http://127.0.0.1:${gw.apiPort}/v3/session-blacklist`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId: 'killed-session', validityInSeconds: 600 }),
    });
    assert.equal(killed.status, 201);
  });
  after(() => gw?.stop());

  it('answers every refused JWT on a connect with the same text, whatever the reason', async () => {
    const valid = signJwt(
      { iss: issuer, aud: audience, exp: exp(), jti: 'ok-session' },
      { alg: 'HS256', key },
    );
    const control = await openSse(`${edge}/_gw/v1/connection/sse?jwt=${valid}`);
    control.close();
    assert.equal(control.status, 200, 'the control: a valid token connects');
    const answers: Record<string, string> = {};
    for (const [reason, token] of Object.entries(refusedTokens())) {
      for (const [how, sse] of [
        ['query', await openSse(`${edge}/_gw/v1/connection/sse?jwt=${token}`)],
        ['header', await openSse(`${edge}/_gw/v1/connection/sse`, { authorization: `Bearer ${token}` })],
      ] as const) {
        sse.close();
        assert.equal(sse.status, 400, `${reason} by ${how}`);
        answers[`${reason} by ${how}`] = sse.errorBody ?? '';
      }
    }
    const texts = new Set(Object.values(answers));
    assert.deepEqual(
      [...texts].sort(),
      ['invalid JWT', 'invalid authorization header: invalid JWT'],
      JSON.stringify(answers, null, 1),
    );
  });
});
