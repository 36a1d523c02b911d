import { randomUUID } from 'node:crypto';
import { apiVersionOf, resourceId, type ResourceInfo } from './resources.js';

/** A Kubernetes object as JSON; only metadata is interpreted. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: KubeMetadata;
  [field: string]: unknown;
}

export interface KubeMetadata {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  [field: string]: unknown;
}

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change, as etcd's history would hold it. */
export interface StoredChange {
  readonly rv: number;
  readonly resource: ResourceInfo;
  readonly type: ChangeType;
  /** The object after the change (for DELETED: its last state, carrying the deletion's RV). */
  readonly object: KubeObject;
  /** The object before a MODIFIED change; watchers need it to turn selector transitions into ADDED/DELETED. */
  readonly previous?: KubeObject;
}

export class StoreError extends Error {
  constructor(
    message: string,
    readonly status: 404 | 409 | 422,
    readonly reason: 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Invalid',
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** RFC 3339 without fractional seconds, as the API server writes metav1.Time. */
function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * All objects of the test API server, one global resourceVersion counter (like etcd's revision) and a
 * bounded change history that watches replay from. Everything is synchronous, so a watch registered
 * right after replaying history can never miss a change.
 */
export class ObjectStore {
  private rv: number;
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private history: StoredChange[] = [];
  /** Watches from an RV below this are answered with 410 Gone. */
  private oldestValidRv: number;
  private readonly listeners = new Set<(change: StoredChange) => void>();

  constructor(
    private readonly maxHistory: number,
    initialRv = 100,
  ) {
    this.rv = initialRv;
    this.oldestValidRv = initialRv;
  }

  currentRv(): number {
    return this.rv;
  }

  /** The oldest RV a watch may still start from. */
  compactedRv(): number {
    return this.oldestValidRv;
  }

  /** Forgets all history, as an etcd compaction does: older watch RVs become 410 Gone. */
  compact(): void {
    this.history = [];
    this.oldestValidRv = this.rv;
  }

  subscribe(listener: (change: StoredChange) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Changes after `sinceRv`, or undefined when history no longer reaches back that far. */
  changesSince(sinceRv: number): StoredChange[] | undefined {
    if (sinceRv < this.oldestValidRv) return undefined;
    return this.history.filter((c) => c.rv > sinceRv);
  }

  list(resource: ResourceInfo, namespace?: string): KubeObject[] {
    const all = [...(this.objects.get(resourceId(resource))?.values() ?? [])];
    return (namespace === undefined ? all : all.filter((o) => o.metadata?.namespace === namespace)).map(clone);
  }

  get(resource: ResourceInfo, namespace: string | undefined, name: string): KubeObject | undefined {
    const o = this.objects.get(resourceId(resource))?.get(objectKey(resource.namespaced ? namespace : undefined, name));
    return o ? clone(o) : undefined;
  }

  create(resource: ResourceInfo, input: KubeObject): KubeObject {
    const { key, namespace, name } = this.identify(resource, input);
    const bucket = this.bucket(resource);
    if (bucket.has(key)) throw new StoreError(`${resource.plural} "${name}" already exists`, 409, 'AlreadyExists');
    const rv = ++this.rv;
    const obj = stored(resource, input, name, namespace, rv, {
      uid: input.metadata?.uid ?? randomUUID(),
      creationTimestamp: input.metadata?.creationTimestamp ?? nowTimestamp(),
    });
    bucket.set(key, obj);
    this.commit({ rv, resource, type: 'ADDED', object: obj });
    return clone(obj);
  }

  update(resource: ResourceInfo, input: KubeObject): KubeObject {
    const { key, namespace, name } = this.identify(resource, input);
    const bucket = this.bucket(resource);
    const previous = bucket.get(key);
    if (!previous) throw new StoreError(`${resource.plural} "${name}" not found`, 404, 'NotFound');
    const rv = ++this.rv;
    // Identity fields are the server's, whatever the caller sent.
    const obj = stored(resource, input, name, namespace, rv, {
      uid: previous.metadata?.uid,
      creationTimestamp: previous.metadata?.creationTimestamp,
    });
    bucket.set(key, obj);
    this.commit({ rv, resource, type: 'MODIFIED', object: obj, previous });
    return clone(obj);
  }

  delete(resource: ResourceInfo, namespace: string | undefined, name: string): KubeObject {
    const key = objectKey(resource.namespaced ? namespace || 'default' : undefined, name);
    const bucket = this.bucket(resource);
    const previous = bucket.get(key);
    if (!previous) throw new StoreError(`${resource.plural} "${name}" not found`, 404, 'NotFound');
    bucket.delete(key);
    const rv = ++this.rv;
    // The DELETED event carries the object's last state with the deletion's resourceVersion.
    const obj: KubeObject = { ...previous, metadata: { ...previous.metadata, resourceVersion: String(rv) } };
    this.commit({ rv, resource, type: 'DELETED', object: obj });
    return clone(obj);
  }

  private identify(resource: ResourceInfo, input: KubeObject): { key: string; namespace?: string; name: string } {
    const name = input.metadata?.name;
    if (typeof name !== 'string' || name === '') throw new StoreError(`${resource.kind}: metadata.name is required`, 422, 'Invalid');
    const namespace = resource.namespaced ? input.metadata?.namespace || 'default' : undefined;
    return { key: objectKey(namespace, name), ...(namespace !== undefined ? { namespace } : {}), name };
  }

  private bucket(resource: ResourceInfo): Map<string, KubeObject> {
    const id = resourceId(resource);
    let b = this.objects.get(id);
    if (!b) {
      b = new Map();
      this.objects.set(id, b);
    }
    return b;
  }

  private commit(change: StoredChange): void {
    this.history.push(change);
    if (this.history.length > this.maxHistory) {
      const dropped = this.history.splice(0, this.history.length - this.maxHistory);
      this.oldestValidRv = dropped[dropped.length - 1].rv;
    }
    for (const l of [...this.listeners]) l(change);
  }
}

/** The object as the server keeps it: its resource's apiVersion/kind, identity and resourceVersion stamped. */
function stored(
  resource: ResourceInfo,
  input: KubeObject,
  name: string,
  namespace: string | undefined,
  rv: number,
  identity: { uid: unknown; creationTimestamp: unknown },
): KubeObject {
  return {
    ...clone(input),
    apiVersion: apiVersionOf(resource),
    kind: resource.kind,
    metadata: {
      ...clone(input.metadata ?? {}),
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      uid: identity.uid,
      creationTimestamp: identity.creationTimestamp,
      resourceVersion: String(rv),
    },
  } as KubeObject;
}
