import yaml from 'js-yaml';

/** A Kubernetes object as found in a manifest file, before any kind-specific checks. */
export interface ManifestObject {
  readonly apiVersion?: unknown;
  readonly kind?: unknown;
  readonly metadata?: { name?: unknown; namespace?: unknown; labels?: unknown; [k: string]: unknown };
  readonly [field: string]: unknown;
}

/**
 * Parses one manifest file: JSON, YAML or multi-document YAML; a `List` (or `*List`) is flattened into
 * its items. Throws with the file name on a syntax error so the caller can keep that file's previous
 * objects instead of deleting them.
 */
export function parseManifestText(text: string, fileName: string): ManifestObject[] {
  let docs: unknown[];
  try {
    // JSON is YAML, but JSON.parse gives better error messages for .json files.
    docs = fileName.endsWith('.json') ? [JSON.parse(text)] : yaml.loadAll(text, undefined, { filename: fileName, json: true });
  } catch (err) {
    throw new Error(`${fileName}: ${(err as Error).message.split('\n')[0]}`);
  }
  const out: ManifestObject[] = [];
  for (const doc of docs) flatten(doc, out);
  return out;
}

function flatten(doc: unknown, out: ManifestObject[]): void {
  if (doc === null || doc === undefined) return; // empty YAML document (`---` with nothing after)
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    out.push({ kind: undefined, invalid: doc } as ManifestObject);
    return;
  }
  const obj = doc as ManifestObject;
  if (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj['items'])) {
    for (const item of obj['items'] as unknown[]) flatten(item, out);
    return;
  }
  out.push(obj);
}
