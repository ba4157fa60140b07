/** The values of secret query parameters never reach a log line of any service (redactUrl, createLogger). */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createLogger, defaultRedactedParameters, redactUrl, setRedactedParameters } from '../src/index.ts';

describe('redactUrl', () => {
  afterEach(() => setRedactedParameters(defaultRedactedParameters));

  it('replaces the value of each known secret parameter, keeping the others and the path', () => {
    assert.equal(
      redactUrl('/api/x?access_token=a&token=b&password=c&secret=d&key=e&jwt=f&page=2#top'),
      '/api/x?access_token=[REDACTED]&token=[REDACTED]&password=[REDACTED]&secret=[REDACTED]&key=[REDACTED]&jwt=[REDACTED]&page=2#top',
    );
    assert.equal(redactUrl('GET /a?PassWord=x'), 'GET /a?PassWord=[REDACTED]', 'any case');
    assert.equal(
      redactUrl('http://h:1/a?api_key=x&client-secret=y&id_token=z&monkey=m'),
      'http://h:1/a?api_key=[REDACTED]&client-secret=[REDACTED]&id_token=[REDACTED]&monkey=m',
    );
    assert.equal(redactUrl('acc%65ss_token=x&q=1'), 'acc%65ss_token=[REDACTED]&q=1', 'a bare, encoded query');
    assert.equal(redactUrl('/a/b=c'), '/a/b=c', 'no query');
  });

  it('takes its list from LOG_REDACT_PARAMS', () => {
    setRedactedParameters(['session']);
    assert.equal(redactUrl('/a?session=x&token=y'), '/a?session=[REDACTED]&token=y');
  });

  it('keeps secret parameters out of every log line that names a URL, a path or a query', () => {
    const lines: string[] = [];
    const logger = createLogger({ name: 't', destination: { write: (l: string) => void lines.push(l) } });
    logger.warn(
      { url: '/x?jwt=eyJ.secret.sig', path: '/y?token=t0ken', query_string: 'password=pw&a=1' },
      'x',
    );
    assert.doesNotMatch(lines.join(''), /eyJ\.secret\.sig|t0ken|password=pw/);
    assert.match(lines.join(''), /a=1/);
  });
});
