/*
 * `explain`: the chains, and the map and set elements, of the kube-proxy table that belong to one
 * Service — by the names and comments kube-proxy writes — with their rule counts and the endpoints
 * each chain sends to.
 */
import { formatHostPort, type KernelObject } from '@kube-proxy/core';
import type { NftRuleset } from './nft-ruleset.js';
import { chainOwner, commentOwner, verdictTarget } from './service-names.js';

const DNAT_TO = /dnat (?:ip6? )?to (\[[^\]]+\]|[0-9.]+|[0-9a-fA-F:]+):(\d+)/;
const DNAT_MAP = /dnat (?:ip6? )?(?:addr \. port )?to numgen random mod \d+ map \{(.*)\}/;
const GOTO = /(?:goto|jump) ([^\s,]+)/g;

/** The endpoints a chain DNATs to, directly or through the endpoint chains it picks among. */
function endpointsOf(ruleset: NftRuleset, chain: string, depth = 0): string[] {
  const rules = ruleset.chains.get(chain)?.rules ?? [];
  const out: string[] = [];
  for (const rule of rules) {
    const one = DNAT_TO.exec(rule);
    if (one) out.push(formatHostPort(one[1]!.replace(/^\[|\]$/g, ''), one[2]!));
    const map = DNAT_MAP.exec(rule);
    if (map) {
      for (const entry of map[1]!.split(',')) {
        const m = /:\s*(\S+) \. (\d+)/.exec(entry);
        if (m) out.push(formatHostPort(m[1]!, m[2]!));
      }
    }
    if (depth < 3 && /numgen random/.test(rule) && !map) {
      for (const g of rule.matchAll(GOTO)) out.push(...endpointsOf(ruleset, g[1]!, depth + 1));
    }
  }
  return [...new Set(out)];
}

export function kernelObjectsOf(ruleset: NftRuleset, service: string): KernelObject[] {
  const prefix = `${ruleset.family} kube-proxy`;
  const objects: KernelObject[] = [];
  const owned = new Set<string>();
  for (const chain of ruleset.chains.values()) {
    const owner = chainOwner(chain.name);
    if (owner?.service !== service) continue;
    owned.add(chain.name);
    const endpoints = endpointsOf(ruleset, chain.name);
    objects.push({ kind: 'chain', name: `${prefix}/${chain.name}`, rules: chain.rules.length, ...(endpoints.length > 0 ? { endpoints } : {}) });
  }
  for (const container of ruleset.containers.values()) {
    const ownerOfSet = chainOwner(container.name);
    if (ownerOfSet?.service === service) {
      objects.push({ kind: container.kind, name: `${prefix}/${container.name}`, rules: container.elements.length });
      continue;
    }
    for (const e of container.elements) {
      const target = verdictTarget(e.value);
      const byComment = commentOwner(e.comment);
      const mine = (target !== undefined && owned.has(target)) || (byComment !== undefined && byComment.startsWith(`${service}:`));
      if (mine) objects.push({ kind: `${container.kind} element`, name: `${prefix} ${container.kind} ${container.name} element ${e.key}`, rules: 1 });
    }
  }
  return objects;
}
