/**
 * Label and field selectors as the API server applies them to list and watch requests. Only the
 * equality-based forms kube-proxy (and most controllers) send are supported; anything else is
 * rejected so a test never silently runs with a selector the fake did not understand.
 */

export type LabelRequirement =
  | { readonly op: 'exists' | 'notExists'; readonly key: string }
  | { readonly op: 'equals' | 'notEquals'; readonly key: string; readonly value: string };

export interface FieldRequirement {
  readonly path: readonly string[];
  readonly op: 'equals' | 'notEquals';
  readonly value: string;
}

export class SelectorError extends Error {
  override readonly name = 'SelectorError';
}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;

function terms(selector: string): string[] {
  return selector
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
}

function checkKey(key: string, term: string): string {
  if (!KEY.test(key)) throw new SelectorError(`invalid label key ${JSON.stringify(key)} in selector term ${JSON.stringify(term)}`);
  return key;
}

/** Parses `key`, `!key`, `key=value`, `key==value`, `key!=value`, comma-separated (AND). */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  return terms(selector).map((term): LabelRequirement => {
    if (/\s(in|notin)\s*\(/.test(term) || term.includes('(')) {
      throw new SelectorError(`set-based selector terms are not supported by the test API server: ${JSON.stringify(term)}`);
    }
    if (term.startsWith('!')) return { op: 'notExists', key: checkKey(term.slice(1).trim(), term) };
    const ne = term.indexOf('!=');
    if (ne >= 0) return { op: 'notEquals', key: checkKey(term.slice(0, ne).trim(), term), value: term.slice(ne + 2).trim() };
    const eq = term.indexOf('=');
    if (eq >= 0) {
      const value = term.slice(term.startsWith('=', eq + 1) ? eq + 2 : eq + 1).trim();
      return { op: 'equals', key: checkKey(term.slice(0, eq).trim(), term), value };
    }
    return { op: 'exists', key: checkKey(term, term) };
  });
}

export function matchesLabels(requirements: readonly LabelRequirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  return requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.op) {
      case 'exists':
        return has;
      case 'notExists':
        return !has;
      case 'equals':
        return has && l[r.key] === r.value;
      case 'notEquals':
        // As upstream: an absent label satisfies `key!=value`.
        return !has || l[r.key] !== r.value;
    }
    return false;
  });
}

/** Parses `a.b.c=value`, `a.b.c==value`, `a.b.c!=value`, comma-separated (AND). */
export function parseFieldSelector(selector: string): FieldRequirement[] {
  return terms(selector).map((term) => {
    const ne = term.indexOf('!=');
    const eq = term.indexOf('=');
    let field: string;
    let value: string;
    let op: FieldRequirement['op'];
    if (ne >= 0) {
      op = 'notEquals';
      field = term.slice(0, ne);
      value = term.slice(ne + 2);
    } else if (eq >= 0) {
      op = 'equals';
      field = term.slice(0, eq);
      value = term.slice(term.startsWith('=', eq + 1) ? eq + 2 : eq + 1);
    } else {
      throw new SelectorError(`invalid field selector term ${JSON.stringify(term)}: expected field=value or field!=value`);
    }
    const path = field.trim().split('.');
    if (path.some((p) => p === '')) throw new SelectorError(`invalid field path in selector term ${JSON.stringify(term)}`);
    return { path, op, value: value.trim() };
  });
}

function fieldValue(obj: unknown, path: readonly string[]): string {
  let cur: unknown = obj;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null) return '';
    cur = (cur as Record<string, unknown>)[p];
  }
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'string' ? cur : String(cur);
}

/**
 * The real API server supports only a few fields per resource (metadata.name, metadata.namespace,
 * spec.clusterIP for services, ...); the fake accepts any dotted path, a missing field reading as "".
 */
export function matchesFields(requirements: readonly FieldRequirement[], obj: unknown): boolean {
  return requirements.every((r) => {
    const v = fieldValue(obj, r.path);
    return r.op === 'equals' ? v === r.value : v !== r.value;
  });
}
