import { decodeConfiguration, validateConfiguration } from '@kube-proxy/core';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { DEPLOY_DIR, kubectlInstalled, kustomize, objectKey, readDeployDocuments, type ApiObject } from './testing/deploy-documents.js';

interface Validatable {
  validate(): void;
}

// kubernetes-models' validators, generated from the Kubernetes OpenAPI schemas (4.5.x has v1.33's GA ServiceCIDR).
// A kind missing here fails the first test: every object we ship gets checked against its schema.
const MODELS: Readonly<Record<string, new (data: never) => Validatable>> = {
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'apps/v1/DaemonSet': DaemonSet,
};

function schemaCheck(o: ApiObject): void {
  const Model = MODELS[`${o.apiVersion}/${o.kind}`];
  if (!Model) throw new Error(`no schema model for ${o.apiVersion} ${o.kind}`);
  new Model(structuredClone(o) as never).validate();
}

const docs = readDeployDocuments();
function find(kind: string): ApiObject {
  const found = docs.filter((d) => d.object.kind === kind);
  if (found.length !== 1) throw new Error(`deploy/ has ${found.length} ${kind} objects, expected 1`);
  return found[0]!.object;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- the specs walk parsed YAML */
const daemonSet = find('DaemonSet') as any;
const configMap = find('ConfigMap') as any;
const podSpec = daemonSet.spec.template.spec;
const container = podSpec.containers[0];
/* eslint-enable @typescript-eslint/no-explicit-any */

describe('deploy/ manifests', () => {
  it('are the five objects a cluster needs, each valid against the Kubernetes OpenAPI schema', () => {
    expect(docs.map((d) => `${d.file}: ${objectKey(d.object)}`)).toEqual([
      'configmap.yaml: ConfigMap/kube-system/kube-proxy-ts',
      'daemonset.yaml: DaemonSet/kube-system/kube-proxy-ts',
      'rbac.yaml: ServiceAccount/kube-system/kube-proxy-ts',
      'rbac.yaml: ClusterRole//kube-proxy-ts',
      'rbac.yaml: ClusterRoleBinding//kube-proxy-ts',
    ]);
    for (const { object } of docs) expect(() => schemaCheck(object)).not.toThrow();
  });

  it('the schema check refuses a mistyped DaemonSet (so passing it means something)', () => {
    const broken = structuredClone(daemonSet);
    broken.spec.template.spec.hostNetwork = 'yes';
    expect(() => schemaCheck(broken)).toThrow(/hostNetwork must be boolean/);
  });
});

describe('the DaemonSet', () => {
  it('runs privileged in the host network namespace, on every Linux node whatever its taints', () => {
    expect(podSpec.hostNetwork).toBe(true);
    expect(podSpec.dnsPolicy).toBe('ClusterFirstWithHostNet');
    expect(container.securityContext).toEqual({ privileged: true });
    expect(podSpec.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(podSpec.priorityClassName).toBe('system-node-critical');
    expect(podSpec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(daemonSet.metadata.namespace).toBe('kube-system');
    expect(daemonSet.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } });
    expect(daemonSet.spec.selector.matchLabels).toEqual(daemonSet.spec.template.metadata.labels);
  });

  it('passes only the config file and the node name, taken from the downward API', () => {
    expect(container.image).toBe('ghcr.io/kube-proxy-ts/kube-proxy:0.1.0');
    expect(container.command).toEqual(['kube-proxy', '--config=/var/lib/kube-proxy/config.conf', '--hostname-override=$(NODE_NAME)']);
    expect(container.args).toBeUndefined();
    expect(container.env).toEqual([{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }]);
  });

  it('mounts the ConfigMap where --config reads it, the xtables lock and /lib/modules read-only', () => {
    const volumes = Object.fromEntries(podSpec.volumes.map((v: { name: string }) => [v.name, v]));
    const mounts = Object.fromEntries(container.volumeMounts.map((m: { name: string }) => [m.name, m]));
    expect(Object.keys(mounts).sort()).toEqual(Object.keys(volumes).sort());

    const cm = Object.values(volumes).find((v) => 'configMap' in (v as object)) as { name: string; configMap: { name: string; items: unknown } };
    expect(cm.configMap).toEqual({ name: configMap.metadata.name, items: [{ key: 'config.conf', path: 'config.conf' }] });
    expect(`--config=${mounts[cm.name].mountPath}/config.conf`).toBe(container.command[1]);
    expect(mounts[cm.name].readOnly).toBe(true);

    expect(volumes['xtables-lock'].hostPath).toEqual({ path: '/run/xtables.lock', type: 'FileOrCreate' });
    expect(mounts['xtables-lock']).toEqual({ name: 'xtables-lock', mountPath: '/run/xtables.lock' });
    expect(volumes['lib-modules'].hostPath).toEqual({ path: '/lib/modules', type: 'Directory' });
    expect(mounts['lib-modules']).toEqual({ name: 'lib-modules', mountPath: '/lib/modules', readOnly: true });
  });

  it('probes /healthz for readiness and /livez for liveness on the port the config binds', () => {
    const port = Number(decodedConfig().healthzBindAddress.split(':').pop());
    expect(port).toBe(10256);
    expect(container.readinessProbe.httpGet).toEqual({ path: '/healthz', port });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/livez', port });
  });

  it('requests what an idle proxy uses and limits memory above the measured 10k-Service peak (270 MB)', () => {
    expect(container.resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } });
  });

  it('runs as the ServiceAccount that rbac.yaml binds', () => {
    expect(podSpec.serviceAccountName).toBe(find('ServiceAccount').metadata.name);
  });
});

function decodedConfig(): ReturnType<typeof decodeConfiguration> {
  return decodeConfiguration(configMap.data['config.conf'], 'deploy/configmap.yaml config.conf');
}

describe('the ConfigMap', () => {
  it("holds a config.conf our own strict decoder accepts and validation finds nothing wrong with", () => {
    expect(Object.keys(configMap.data)).toEqual(['config.conf']);
    const cfg = decodedConfig();
    expect(validateConfiguration(cfg)).toEqual([]);
    expect(cfg.mode).toBe('nftables');
    expect(cfg.clientConnection.kubeconfig).toBe('');
    expect(cfg.clusterCIDR).toBe('10.244.0.0/16');
    expect(cfg.healthzBindAddress).toBe('0.0.0.0:10256');
    expect(cfg.metricsBindAddress).toBe('127.0.0.1:10249');
  });
});

describe('kubectl kustomize deploy/', () => {
  const installed = kubectlInstalled();
  if (!installed) {
    // Loud on purpose: kustomization.yaml went unchecked on this machine.
    console.warn(`SKIPPED: kubectl is not installed, so \`kubectl kustomize ${DEPLOY_DIR}\` was not checked. Install kubectl to check it.`);
  }
  (installed ? it : it.skip)('renders exactly the objects of the listed files, unchanged', () => {
    const rendered = kustomize();
    const byKey = (objects: ApiObject[]) => Object.fromEntries(objects.map((o) => [objectKey(o), o]));
    expect(rendered).toHaveLength(docs.length);
    expect(byKey(rendered)).toEqual(byKey(docs.map((d) => d.object)));
  });
});
