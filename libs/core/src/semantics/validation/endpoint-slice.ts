import type { V1EndpointSlice } from '@kubernetes/client-node';
import { parseIP } from '../model/ip.js';
import { LABEL_SERVICE_NAME } from '../model/well-known.js';
import { FieldPath, type FieldError } from './field-error.js';
import {
  checkFormat,
  checkIP,
  checkOneOf,
  checkRange,
  optionalArray,
  optionalBoolean,
  optionalInt32,
  optionalRecord,
  optionalString,
} from './field-checks.js';
import { guarded } from './guarded.js';
import { isAbsent, isRecord, jsonType, quote } from './json-shape.js';
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isFullyQualifiedDomainName,
  isLabelValue,
  isQualifiedName,
} from './name-rules.js';
import { validateLabels, validateObjectMeta } from './object-meta.js';
import { PROTOCOLS } from './service-ports.js';

/** addressType values a new slice may have; "IP" is the deprecated one older slices may still carry. */
export const ADDRESS_TYPES = ['FQDN', 'IP', 'IPv4', 'IPv6'] as const;
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 100;
const MAX_TOPOLOGY_LABELS = 16;
const MAX_HINTS = 8;

/**
 * Checks a discovery.k8s.io/v1 EndpointSlice the way kube-apiserver's ValidateEndpointSlice does
 * (pkg/apis/discovery/validation), plus one rule the proxy depends on: the
 * `kubernetes.io/service-name` label, when present, must be a valid Service name (it becomes part of
 * the proxy's service keys). FQDN slices are valid (the proxy ignores them, as upstream does). Unset
 * port names and protocols read as "" and TCP, the API's defaults. Upstream's rule against loopback
 * or link-local endpoint IPs is policy, not syntax, and is not applied: a manifest may point a Service
 * at 127.0.0.1 on a laptop. Returns [] for a valid slice; never throws.
 */
export function validateEndpointSlice(slice: V1EndpointSlice): readonly FieldError[] {
  return guarded(() => sliceErrors(slice as unknown));
}

function sliceErrors(slice: unknown): FieldError[] {
  if (!isRecord(slice)) return [{ field: '<object>', message: `must be an object, got ${jsonType(slice)}` }];
  const errs = validateObjectMeta(slice['metadata'], { namespaced: true, name: isDNS1123Subdomain });
  const labels = isRecord(slice['metadata']) ? slice['metadata']['labels'] : undefined;
  const serviceName = isRecord(labels) ? labels[LABEL_SERVICE_NAME] : undefined;
  // A label value that is not even a valid label value is reported by validateObjectMeta already.
  if (typeof serviceName === 'string' && isLabelValue(serviceName).length === 0) {
    const at = new FieldPath('metadata.labels').key(LABEL_SERVICE_NAME);
    for (const msg of isDNS1035Label(serviceName)) errs.push(at.error(`Invalid value: ${quote(serviceName)}: must be a valid Service name: ${msg}`));
  }

  const typePath = new FieldPath('addressType');
  const addressType = optionalString(slice['addressType'], typePath, errs);
  if (addressType === '') errs.push(typePath.error('Required value'));
  else if (addressType !== undefined) checkOneOf(addressType, ADDRESS_TYPES, typePath, errs);

  validateEndpoints(slice['endpoints'], addressType ?? '', errs);
  validatePorts(slice['ports'], errs);
  return errs;
}

function validateEndpoints(value: unknown, addressType: string, errs: FieldError[]): void {
  const path = new FieldPath('endpoints');
  const endpoints = optionalArray(value, path, errs);
  if (endpoints === undefined) return;
  if (endpoints.length > MAX_ENDPOINTS) {
    errs.push(path.error(`Too many: ${endpoints.length}: must have at most ${MAX_ENDPOINTS} items`));
    return;
  }
  endpoints.forEach((raw, i) => {
    const at = path.index(i);
    if (!isRecord(raw)) {
      errs.push(at.error(`must be an object, got ${jsonType(raw)}`));
      return;
    }
    const addrPath = at.at('addresses');
    const addresses = optionalArray(raw['addresses'], addrPath, errs);
    if (addresses !== undefined) {
      if (addresses.length === 0) errs.push(addrPath.error('Required value: must contain at least 1 address'));
      else if (addresses.length > MAX_ADDRESSES) errs.push(addrPath.error(`Too many: ${addresses.length}: must have at most ${MAX_ADDRESSES} items`));
      else addresses.forEach((a, j) => validateAddress(a, addressType, addrPath.index(j), errs));
    }

    const conditions = optionalRecord(raw['conditions'], at.at('conditions'), errs);
    if (conditions !== undefined) {
      for (const c of ['ready', 'serving', 'terminating']) optionalBoolean(conditions[c], at.at('conditions').at(c), errs);
    }
    optionalFormat(raw['hostname'], isDNS1123Label, at.at('hostname'), errs);
    optionalFormat(raw['nodeName'], isDNS1123Subdomain, at.at('nodeName'), errs);
    optionalFormat(raw['zone'], isLabelValue, at.at('zone'), errs);

    const topology = raw['deprecatedTopology'];
    if (isRecord(topology) && Object.keys(topology).length > MAX_TOPOLOGY_LABELS) {
      errs.push(at.at('deprecatedTopology').error(`Too many: ${Object.keys(topology).length}: must have at most ${MAX_TOPOLOGY_LABELS} items`));
    }
    errs.push(...validateLabels(topology, at.at('deprecatedTopology')));
    validateHints(raw['hints'], at.at('hints'), errs);
  });
}

/** Addresses by addressType: IPv4/IPv6 addresses of that family, "IP" either, FQDN a domain name. */
function validateAddress(value: unknown, addressType: string, path: FieldPath, errs: FieldError[]): void {
  if (typeof value !== 'string') {
    errs.push(path.error(`must be a string, got ${jsonType(value)}`));
    return;
  }
  if (addressType === 'IPv4' || addressType === 'IPv6') {
    const ip = parseIP(value);
    if (ip === undefined || ip.family !== addressType) {
      errs.push(path.error(`Invalid value: ${quote(value)}: must be a valid ${addressType} address`));
    }
  } else if (addressType === 'IP') {
    checkIP(value, path, errs);
  } else if (addressType === 'FQDN') {
    checkFormat(value, isFullyQualifiedDomainName, path, errs);
  }
}

/** hints.forZones (zone names, label values) and hints.forNodes (node names): at most 8 each, no repeats. */
function validateHints(value: unknown, path: FieldPath, errs: FieldError[]): void {
  const hints = optionalRecord(value, path, errs);
  if (hints === undefined) return;
  const lists: Array<[string, (v: string) => string[]]> = [
    ['forZones', isLabelValue],
    ['forNodes', isDNS1123Subdomain],
  ];
  for (const [field, rule] of lists) {
    const listPath = path.at(field);
    const list = optionalArray(hints[field], listPath, errs);
    if (list === undefined) continue;
    if (list.length > MAX_HINTS) {
      errs.push(listPath.error(`Too many: ${list.length}: must have at most ${MAX_HINTS} items`));
      continue;
    }
    const seen = new Set<string>();
    list.forEach((item, i) => {
      const namePath = listPath.index(i).at('name');
      const name = isRecord(item) ? optionalString(item['name'], namePath, errs) : undefined;
      if (!isRecord(item)) errs.push(listPath.index(i).error(`must be an object, got ${jsonType(item)}`));
      if (name === undefined) return;
      if (seen.has(name)) errs.push(namePath.error(`Duplicate value: ${quote(name)}`));
      seen.add(name);
      checkFormat(name, rule, namePath, errs);
    });
  }
}

/**
 * ports: at most 100; names are "" or DNS-1123 labels, unique (one unnamed port at most); protocol
 * TCP/UDP/SCTP; port, when set, 1–65535 (the proxy cannot program another number).
 */
function validatePorts(value: unknown, errs: FieldError[]): void {
  const path = new FieldPath('ports');
  const ports = optionalArray(value, path, errs);
  if (ports === undefined) return;
  if (ports.length > MAX_PORTS) {
    errs.push(path.error(`Too many: ${ports.length}: must have at most ${MAX_PORTS} items`));
    return;
  }
  const names = new Set<string>();
  ports.forEach((raw, i) => {
    const at = path.index(i);
    if (!isRecord(raw)) {
      errs.push(at.error(`must be an object, got ${jsonType(raw)}`));
      return;
    }
    const name = optionalString(raw['name'], at.at('name'), errs);
    if (name !== undefined) {
      if (name !== '') checkFormat(name, isDNS1123Label, at.at('name'), errs);
      if (names.has(name)) errs.push(at.at('name').error(`Duplicate value: ${quote(name)}`));
      names.add(name);
    }
    const protocolText = optionalString(raw['protocol'], at.at('protocol'), errs);
    const protocol = protocolText === '' ? 'TCP' : protocolText;
    if (protocol !== undefined) checkOneOf(protocol, PROTOCOLS, at.at('protocol'), errs);
    if (!isAbsent(raw['port'])) {
      const port = optionalInt32(raw['port'], at.at('port'), errs);
      if (port !== undefined) checkRange(port, 1, 65535, at.at('port'), errs);
    }
    optionalFormat(raw['appProtocol'], isQualifiedName, at.at('appProtocol'), errs);
  });
}

/** An optional string field that, when set, must have a format. */
function optionalFormat(value: unknown, rule: (v: string) => string[], path: FieldPath, errs: FieldError[]): void {
  if (isAbsent(value)) return;
  const text = optionalString(value, path, errs);
  if (text !== undefined) checkFormat(text, rule, path, errs);
}
