import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type CloudEvent,
  contentTypeAttribute,
  dataContentType,
  dataSchema,
  defaultSpecVersion,
  extensionNames,
  isSupportedSpecVersion,
  supportedSpecVersions,
} from '../src/index.ts';

const v02: CloudEvent = {
  specversion: '0.2',
  id: '1',
  type: 't',
  source: 's',
  contenttype: 'text/plain',
  schemaurl: 'http://schema/0.2',
  gw: { correlation: 'c' },
  traceparent: 'x',
};
const v1: CloudEvent = {
  specversion: '1.0',
  id: '1',
  type: 't',
  source: 's',
  datacontenttype: 'application/xml',
  dataschema: 'http://schema/1.0',
  subject: 'sub',
  data_base64: 'eA==',
  partitionkey: 'k',
};

describe('CloudEvent model', () => {
  it('supports 0.2 and 1.0 and creates 0.2 by default', () => {
    assert.deepEqual([...supportedSpecVersions], ['0.2', '1.0']);
    assert.equal(defaultSpecVersion, '0.2');
    assert.equal(isSupportedSpecVersion('1.0'), true);
    assert.equal(isSupportedSpecVersion('0.1'), false);
    assert.equal(isSupportedSpecVersion(1), false);
  });

  it('reads the data content type and schema under each version’s name', () => {
    assert.equal(contentTypeAttribute('0.2'), 'contenttype');
    assert.equal(contentTypeAttribute('1.0'), 'datacontenttype');
    assert.equal(dataContentType(v02), 'text/plain');
    assert.equal(dataContentType(v1), 'application/xml');
    assert.equal(dataSchema(v02), 'http://schema/0.2');
    assert.equal(dataSchema(v1), 'http://schema/1.0');
  });

  it('lists extension attributes, which differ by version', () => {
    assert.deepEqual(extensionNames(v02, '0.2'), ['gw', 'traceparent']);
    assert.deepEqual(extensionNames(v1, '1.0'), ['partitionkey']);
    assert.deepEqual(extensionNames({ ...v1, specversion: '0.2' }, '0.2'), [
      'datacontenttype',
      'dataschema',
      'subject',
      'data_base64',
      'partitionkey',
    ]);
  });
});
