import { FieldPath, type FieldError } from './field-error.js';
import {
  checkFormat,
  checkOneOf,
  checkRange,
  optionalArray,
  optionalInt32,
  optionalString,
} from './field-checks.js';
import { isAbsent, isRecord, jsonType, quote } from './json-shape.js';
import { isDNS1123Label, isIANAServiceName, isQualifiedName } from './name-rules.js';

export const PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;

/**
 * spec.ports as ValidateService checks them (validateServicePort plus the duplicate rules): a name is
 * a DNS-1123 label, required and unique when there is more than one port (a single port may stay
 * unnamed); port 1–65535; protocol TCP/UDP/SCTP (unset defaults to TCP); targetPort a port number or an
 * IANA service name (unset or 0 defaults to `port`); nodePort 0–65535 and not on ClusterIP services;
 * no two ports with the same protocol and port, or the same protocol and node port. Upstream checks
 * port names as DNS-1123 labels (up to 63 characters), not as IANA_SVC_NAME (15): only the target
 * port's name is an IANA service name, because it names a container port.
 */
export function validateServicePorts(value: unknown, type: string, errs: FieldError[]): void {
  const path = new FieldPath('spec.ports');
  const ports = optionalArray(value, path, errs);
  if (ports === undefined) return;
  const requireName = ports.length > 1;
  const names = new Set<string>();
  const portKeys = new Set<string>();
  const nodePortKeys = new Set<string>();
  ports.forEach((raw, i) => {
    const at = path.index(i);
    if (!isRecord(raw)) {
      errs.push(at.error(`must be an object, got ${jsonType(raw)}`));
      return;
    }
    const name = optionalString(raw['name'], at.at('name'), errs);
    if (name !== undefined) {
      if (requireName && name === '') errs.push(at.at('name').error('Required value'));
      else if (name !== '') {
        checkFormat(name, isDNS1123Label, at.at('name'), errs);
        if (names.has(name)) errs.push(at.at('name').error(`Duplicate value: ${quote(name)}`));
        names.add(name);
      }
    }

    const port = optionalInt32(raw['port'], at.at('port'), errs);
    if (port !== undefined) checkRange(port, 1, 65535, at.at('port'), errs);

    const protocolText = optionalString(raw['protocol'], at.at('protocol'), errs);
    const protocol = protocolText === '' ? 'TCP' : protocolText;
    if (protocol !== undefined) checkOneOf(protocol, PROTOCOLS, at.at('protocol'), errs);

    validateTargetPort(raw['targetPort'], at.at('targetPort'), errs);

    if (!isAbsent(raw['appProtocol'])) {
      const appProtocol = optionalString(raw['appProtocol'], at.at('appProtocol'), errs);
      if (appProtocol !== undefined) checkFormat(appProtocol, isQualifiedName, at.at('appProtocol'), errs);
    }

    const nodePort = optionalInt32(raw['nodePort'], at.at('nodePort'), errs);
    if (nodePort !== undefined && nodePort !== 0) {
      checkRange(nodePort, 0, 65535, at.at('nodePort'), errs);
      if (type === 'ClusterIP') errs.push(at.at('nodePort').error("Forbidden: may not be used when `type` is 'ClusterIP'"));
      const key = `${protocol}/${nodePort}`;
      if (nodePortKeys.has(key)) errs.push(at.at('nodePort').error(`Duplicate value: ${nodePort}`));
      nodePortKeys.add(key);
    }

    if (port !== undefined && protocol !== undefined) {
      const key = `${protocol}/${port}`;
      if (portKeys.has(key)) errs.push(at.error(`Duplicate value: {"protocol":"${protocol}","port":${port}}`));
      portKeys.add(key);
    }
  });
}

/** ValidatePortNumOrName, after the API's defaulting of an unset (0 or "") targetPort to `port`. */
function validateTargetPort(value: unknown, path: FieldPath, errs: FieldError[]): void {
  if (isAbsent(value) || value === 0 || value === '') return;
  if (typeof value === 'number') {
    const n = optionalInt32(value, path, errs);
    if (n !== undefined) checkRange(n, 1, 65535, path, errs);
  } else if (typeof value === 'string') {
    checkFormat(value, isIANAServiceName, path, errs);
  } else {
    errs.push(path.error(`must be an integer or a string, got ${jsonType(value)}`));
  }
}
