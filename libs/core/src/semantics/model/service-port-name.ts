import type { Protocol } from './protocol.js';

/**
 * Identity of one port of one Service: upstream's ServicePortName.
 * `key` is upstream's String(): `namespace/name:portName`, or `namespace/name` when the port is unnamed.
 * It is the key of ServicePortMap and EndpointsMap, and (with the protocol) the input of chain-name hashes.
 */
export interface ServicePortName {
  readonly namespace: string;
  readonly name: string;
  /** The Service port's `name` (may be ""). */
  readonly port: string;
  readonly protocol: Protocol;
  readonly key: string;
}

/** `namespace/name`: upstream's types.NamespacedName.String(). */
export function namespacedName(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function servicePortName(namespace: string, name: string, port: string, protocol: Protocol): ServicePortName {
  const nn = namespacedName(namespace, name);
  return { namespace, name, port, protocol, key: port === '' ? nn : `${nn}:${port}` };
}
