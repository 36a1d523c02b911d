import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { validateEndpointSlice } from './endpoint-slice.js';
import { validateNode } from './node.js';
import { validateService } from './service.js';

const EXAMPLES = fileURLToPath(new URL('../../../../../examples', import.meta.url));

function objects(): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const file of readdirSync(EXAMPLES).filter((f) => /\.(ya?ml|json)$/.test(f)).sort()) {
    const text = readFileSync(join(EXAMPLES, file), 'utf8');
    const docs = file.endsWith('.json') ? [JSON.parse(text)] : yaml.loadAll(text);
    for (const doc of docs as Array<Record<string, unknown> | null>) {
      if (!doc) continue;
      const items = Array.isArray(doc['items']) ? (doc['items'] as Array<Record<string, unknown>>) : [doc];
      out.push(...items);
    }
  }
  return out;
}

describe('the bundled examples/ cluster', () => {
  const all = objects();
  it('has Services, EndpointSlices and a Node to check', () => {
    const kinds = new Set(all.map((o) => o['kind']));
    expect([...kinds].sort()).toEqual(['EndpointSlice', 'Node', 'Service']);
    expect(all.length).toBeGreaterThan(15);
  });
  it.each(all.map((o) => [`${o['kind']} ${(o['metadata'] as { name: string }).name}`, o] as const))('%s passes validation', (_, obj) => {
    // Manifests without a namespace land in "default" (as kubectl apply does) before validation.
    const md = obj['metadata'] as Record<string, unknown>;
    const o = obj['kind'] === 'Node' || md['namespace'] ? obj : { ...obj, metadata: { ...md, namespace: 'default' } };
    const validate = { Service: validateService, EndpointSlice: validateEndpointSlice, Node: validateNode }[o['kind'] as 'Node'];
    expect(validate(o as never)).toEqual([]);
  });
});
