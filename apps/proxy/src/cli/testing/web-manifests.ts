import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a CLI spec's manifests say beyond the common Node, Service and EndpointSlice. */
export interface WebManifestParts {
  /** YAML lines under the Node's metadata after its name (indented two spaces), e.g. its labels. */
  readonly nodeMetadata?: string;
  /** YAML lines of the Service spec between clusterIP and ports (indented two spaces). */
  readonly serviceSpec?: string;
  /** The EndpointSlice's `endpoints:` list items (indented two spaces). */
  readonly endpoints: string;
}

/**
 * Node node-1 (InternalIP 192.168.50.1), Service default/web (ClusterIP 10.96.0.10, port http 80 → 8080/TCP)
 * and its EndpointSlice web-abcde, as a multi-document manifest for `--manifests`; the specs differ
 * only in the parts they pass.
 */
export function webManifests(parts: WebManifestParts): string {
  return `
apiVersion: v1
kind: Node
metadata:
  name: node-1
${parts.nodeMetadata ?? ''}status:
  addresses: [{ type: InternalIP, address: 192.168.50.1 }]
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: default }
spec:
  clusterIP: 10.96.0.10
${parts.serviceSpec ?? ''}  ports: [{ name: http, port: 80, targetPort: 8080, protocol: TCP }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abcde
  namespace: default
  labels: { kubernetes.io/service-name: web }
addressType: IPv4
ports: [{ name: http, port: 8080, protocol: TCP }]
endpoints:
${parts.endpoints}`;
}

/** A fresh temporary directory (named from `prefix`) holding `yaml` as objects.yaml; the caller removes it. */
export async function manifestsDir(prefix: string, yaml: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await writeFile(join(dir, 'objects.yaml'), yaml);
  return dir;
}
