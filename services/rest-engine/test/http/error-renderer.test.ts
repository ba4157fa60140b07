import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { preferredFormat } from '../../src/http/content-negotiation.ts';
import { renderError } from '../../src/http/error-renderer.ts';

describe('error rendering', () => {
  it('renders JSON with message, type and status by default', () => {
    const r = renderError(404, 'Resource not found', undefined);
    assert.equal(r.contentType, 'application/json');
    assert.equal(r.body, '{"message":"Resource not found","type":"error","status":404}');
    assert.equal(renderError(404, 'x', '*/*').contentType, 'application/json');
  });

  it('renders XML when the caller prefers it', () => {
    const r = renderError(401, 'Unauthorized & <gone>', 'application/xml');
    assert.equal(r.contentType, 'application/xml');
    assert.equal(
      r.body,
      '<?xml version="1.0" encoding="UTF-8"?>\n<root>\n  <message>Unauthorized &amp; &lt;gone&gt;</message>\n  <status>401</status>\n  <type>error</type>\n</root>',
    );
  });

  it('renders an HTML page with the message escaped', () => {
    const r = renderError(500, '<script>alert(1)</script>', 'text/html,application/xhtml+xml,*/*;q=0.8');
    assert.equal(r.contentType, 'text/html; charset=utf-8');
    assert.match(r.body, /<h3>HTTP-500<\/h3>/);
    assert.match(r.body, /Something may be broken/);
    assert.match(r.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(r.body, /<script>/);
    assert.match(renderError(404, 'x', 'text/html').body, /unable to process your request/);
  });

  it('negotiates by quality and order', () => {
    assert.equal(preferredFormat('application/json, text/html'), 'json');
    assert.equal(preferredFormat('text/html, application/json'), 'html');
    assert.equal(preferredFormat('text/html;q=0.5, application/xml'), 'xml');
    assert.equal(preferredFormat('image/png'), 'json');
    assert.equal(preferredFormat('application/problem+json'), 'json');
  });
});
