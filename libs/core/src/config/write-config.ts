import * as yaml from 'js-yaml';
import type { KubeProxyConfiguration } from './types.js';

/** apiVersion and kind lead; everything else is alphabetical at every level, as upstream's encoder writes it. */
function compareKeys(a: string, b: string): number {
  const rank = (k: string): number => (k === 'apiVersion' ? 0 : k === 'kind' ? 1 : 2);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * The configuration as a v1alpha1 YAML document, for --write-config-to. Every field is written
 * (including empty strings and nulls), so the file documents the effective values and reads back
 * through decodeConfiguration to the same configuration.
 */
export function encodeConfiguration(cfg: KubeProxyConfiguration): string {
  return yaml.dump(cfg, {
    schema: yaml.CORE_SCHEMA,
    sortKeys: compareKeys,
    lineWidth: -1,
    noRefs: true,
    quotingType: '"',
  });
}
