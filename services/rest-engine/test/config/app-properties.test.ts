import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '@gatehouse/service-kit';
import { envNameOf, loadAppProperties } from '../../src/config/app-properties.ts';
import { describeRestSettings, loadRestSettings } from '../../src/config/rest-settings.ts';

function folderWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rest-props-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** A `${key}` placeholder as the property files write it. */
const ref = (key: string) => `$${'{'}${key}}`;

describe('application properties', () => {
  it('names environment variables by upper-casing and turning . and - into _', () => {
    assert.equal(envNameOf('rest.server.port'), 'REST_SERVER_PORT');
    assert.equal(envNameOf('rest.server.max-body-size'), 'REST_SERVER_MAX_BODY_SIZE');
    assert.equal(envNameOf('yaml.rest.automation'), 'YAML_REST_AUTOMATION');
  });

  it('reads nested application.yml keys, with environment overrides', () => {
    const dir = folderWith({
      'application.yml':
        'rest:\n  automation: true\n  server:\n    port: 9000\nstatic:\n  html:\n    folder: file:/srv/www\n',
    });
    const props = loadAppProperties(dir, { REST_SERVER_PORT: '9100' });
    assert.equal(props.get('rest.automation'), 'true');
    assert.equal(props.get('rest.server.port'), '9100');
    assert.equal(props.get('static.html.folder'), 'file:/srv/www');
    const settings = loadRestSettings(props, dir);
    assert.equal(settings['rest.server.port'], 9100);
    assert.equal(settings['rest.automation'], true);
  });

  it('reads application.properties and lets application.yml win', () => {
    const dir = folderWith({
      'application.properties':
        '# comment\nrest.automation=true\napplication.name = from-properties\nserver.port: 7000\n',
      'application.yml': 'application:\n  name: from-yaml\n',
    });
    const settings = loadRestSettings(loadAppProperties(dir, {}), dir);
    assert.equal(settings['application.name'], 'from-yaml');
    assert.equal(
      settings['rest.server.port'],
      7000,
      'server.port is accepted when rest.server.port is unset',
    );
  });

  it('applies defaults and resolves placeholders between properties', () => {
    const dir = folderWith({
      'application.yml': `base: /data\nstatic.html.folder: "file:${ref('base')}/www"\nx: "${ref('nope:fallback')}"\n`,
    });
    const props = loadAppProperties(dir, {});
    assert.equal(props.get('static.html.folder'), 'file:/data/www');
    assert.equal(props.get('x'), 'fallback');
    const settings = loadRestSettings(props, dir);
    assert.equal(settings['rest.server.port'], 8085);
    assert.equal(settings['rest.automation'], false);
    assert.equal(settings['yaml.rest.automation'], 'classpath:/rest.yaml');
    assert.equal(settings['http.trace.id.header'], 'X-Trace-Id');
    assert.equal(settings['http.correlation.id.header'], 'X-Correlation-Id');
    assert.deepEqual(settings['functions.path'], ['classpath:/functions']);
  });

  it('stops with an error naming a bad property', () => {
    const dir = folderWith({});
    assert.throws(
      () => loadRestSettings(loadAppProperties(dir, { REST_SERVER_PORT: 'eighty' }), dir),
      (err: unknown) =>
        err instanceof ConfigError && /rest\.server\.port: must be an integer/.test(err.message),
    );
  });

  it('describes every setting for the README', () => {
    const table = describeRestSettings();
    assert.match(table, /\| `rest\.server\.port` \| `REST_SERVER_PORT` \| `8085` \|/);
    assert.match(table, /\| `functions\.path` \| `FUNCTIONS_PATH` \|/);
  });
});

describe('README', () => {
  it('documents every setting with its default', () => {
    // The formatter pads table cells, so rows are compared with the padding taken out.
    const squeeze = (line: string) => line.replace(/\s*\|\s*/g, '|').trim();
    const readme = new Set(
      readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
        .split('\n')
        .map(squeeze),
    );
    const rows = describeRestSettings()
      .split('\n')
      .filter((row) => !row.startsWith('|---'));
    for (const row of rows) assert.ok(readme.has(squeeze(row)), `README lacks the settings row ${row}`);
  });
});
