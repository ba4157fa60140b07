/**
 * docker-compose.yml publishes the edge and nothing else to the network: every other published
 * port is bound to the host's loopback. A REST engine or a broker published on all interfaces
 * would be reached around the edge (its JWT checks, its limits). Read from the file itself, with
 * no container engine, so it runs with the node tests; `make compose-check` validates the file.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const composeFile = fileURLToPath(new URL('../../docker-compose.yml', import.meta.url));
/** The services allowed to listen on every interface: the public surface. */
const publicServices = new Set(['edge']);
const loopback = new Set(['127.0.0.1', '[::1]', '::1']);

interface Published {
  service: string;
  hostIp: string | undefined;
  text: string;
}

/** `HOST_IP:HOST:CONTAINER`, `HOST:CONTAINER` or `CONTAINER` (variables may hold colons: `${X:-1}`). */
function hostIpOf(entry: string): string | undefined {
  const plain = entry.replace(/\$\{[^}]*\}/g, 'VAR');
  const bracketed = /^(\[[^\]]*\]):(.*)$/.exec(plain);
  if (bracketed) return bracketed[1];
  const parts = plain.split(':');
  return parts.length >= 3 ? parts[0] : undefined;
}

function publishedPorts(document: { services: Record<string, { ports?: unknown[] }> }): Published[] {
  const out: Published[] = [];
  for (const [service, definition] of Object.entries(document.services)) {
    for (const entry of definition.ports ?? []) {
      if (typeof entry === 'object' && entry !== null) {
        const long = entry as { host_ip?: string };
        out.push({ service, hostIp: long.host_ip, text: JSON.stringify(entry) });
      } else {
        out.push({ service, hostIp: hostIpOf(String(entry)), text: String(entry) });
      }
    }
  }
  return out;
}

describe('docker-compose.yml published ports', () => {
  const published = publishedPorts(parse(readFileSync(composeFile, 'utf8')));

  it('publishes the edge on the network and every other port on loopback only', () => {
    assert.ok(
      published.some((p) => publicServices.has(p.service)),
      'the edge is published',
    );
    const open = published.filter(
      (p) => !publicServices.has(p.service) && (p.hostIp === undefined || !loopback.has(p.hostIp)),
    );
    assert.deepEqual(
      open.map((p) => `${p.service}: ${p.text}`),
      [],
      'published on every interface, around the edge',
    );
  });

  it('reads the host address of each spelling', () => {
    const restPort = '$' + '{GATEHOUSE_REST_PORT:-8085}'; // compose's variable syntax, not a template
    assert.equal(hostIpOf(`${restPort}:8085`), undefined);
    assert.equal(hostIpOf(`127.0.0.1:${restPort}:8085`), '127.0.0.1');
    assert.equal(hostIpOf('[::1]:8085:8085'), '[::1]');
    assert.equal(hostIpOf('8085'), undefined);
  });
});
