import { FieldPath, type FieldError } from './field-error.js';
import { byteLength, isAbsent, isRecord, jsonType, quote } from './json-shape.js';
import { isDNS1123Label, isLabelValue, isQualifiedName } from './name-rules.js';

/** The API server's limit on all annotations of one object together (keys and values), 256 KiB. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

export interface ObjectMetaRules {
  /** Namespaced kinds need a namespace that is a DNS-1123 label; cluster-scoped kinds ignore it. */
  readonly namespaced: boolean;
  /** The kind's name format (ValidateServiceName, ValidateNodeName, …). */
  readonly name: (value: string) => string[];
}

/**
 * The parts of apimachinery's ValidateObjectMeta that concern what kube-proxy reads: name (required,
 * in the kind's format), namespace (a DNS-1123 label), labels and annotations. Owner references,
 * finalizers and managed fields are not read by the proxy and not checked.
 */
export function validateObjectMeta(meta: unknown, rules: ObjectMetaRules): FieldError[] {
  const path = new FieldPath('metadata');
  if (!isRecord(meta)) return [path.error(isAbsent(meta) ? 'Required value' : `must be an object, got ${jsonType(meta)}`)];
  const errs: FieldError[] = [];

  const name = meta['name'];
  const namePath = path.at('name');
  if (isAbsent(name) || name === '') errs.push(namePath.error('Required value: name is required'));
  else if (typeof name !== 'string') errs.push(namePath.error(`must be a string, got ${jsonType(name)}`));
  else for (const msg of rules.name(name)) errs.push(namePath.error(`Invalid value: ${quote(name)}: ${msg}`));

  if (rules.namespaced) {
    const ns = meta['namespace'];
    const nsPath = path.at('namespace');
    if (isAbsent(ns) || ns === '') errs.push(nsPath.error('Required value'));
    else if (typeof ns !== 'string') errs.push(nsPath.error(`must be a string, got ${jsonType(ns)}`));
    else for (const msg of isDNS1123Label(ns)) errs.push(nsPath.error(`Invalid value: ${quote(ns)}: ${msg}`));
  }

  errs.push(...validateLabels(meta['labels'], path.at('labels')));
  errs.push(...validateAnnotations(meta['annotations'], path.at('annotations')));
  return errs;
}

/** A label map (metadata.labels, spec.selector, deprecatedTopology): qualified-name keys, label values. */
export function validateLabels(labels: unknown, path: FieldPath): FieldError[] {
  if (isAbsent(labels)) return [];
  if (!isRecord(labels)) return [path.error(`must be a map of strings, got ${jsonType(labels)}`)];
  const errs: FieldError[] = [];
  for (const [key, value] of Object.entries(labels)) {
    const at = path.key(keyText(key));
    for (const msg of isQualifiedName(key)) errs.push(at.error(`Invalid value: ${quote(key)}: ${msg}`));
    if (typeof value !== 'string') errs.push(at.error(`must be a string, got ${jsonType(value)}`));
    else for (const msg of isLabelValue(value)) errs.push(at.error(`Invalid value: ${quote(value)}: ${msg}`));
  }
  return errs;
}

/** Annotations: keys are qualified names (compared lower-cased, as upstream), values any string, 256 KiB in all. */
export function validateAnnotations(annotations: unknown, path: FieldPath): FieldError[] {
  if (isAbsent(annotations)) return [];
  if (!isRecord(annotations)) return [path.error(`must be a map of strings, got ${jsonType(annotations)}`)];
  const errs: FieldError[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) {
    const at = path.key(keyText(key));
    for (const msg of isQualifiedName(key.toLowerCase())) errs.push(at.error(`Invalid value: ${quote(key)}: ${msg}`));
    if (typeof value !== 'string') {
      errs.push(at.error(`must be a string, got ${jsonType(value)}`));
      continue;
    }
    total += byteLength(key) + byteLength(value);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) {
    errs.push(path.error(`Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT_BYTES} bytes`));
  }
  return errs;
}

/** A map key as it appears in a field path: as written when it is plain text, quoted otherwise. */
export function keyText(key: string): string {
  return /^[A-Za-z0-9._/-]{1,100}$/.test(key) ? key : quote(key, 40);
}
