/*
 * The plugin SDK's recorded surface and the rule that guards it. Not exported from core's index: only
 * sdk-surface.spec.ts uses it, comparing the surface extracted from the sources with the committed
 * libs/core/sdk-surface.json. Pure (no compiler, no file system) so the rule itself is unit-tested.
 */

/**
 * The symbols a third-party backend is meant to use (README, "Backend plugin SDK"). The spec adds
 * every core type their declarations mention, so the recorded SDK is closed under references.
 */
export const SDK_ROOTS: readonly string[] = [
  // The contract and what the host hands over.
  'BACKEND_PLUGIN_API_VERSION',
  'BackendPlugin',
  'DetectResult',
  'ProxyContext',
  'PROXY_CONTEXT',
  'TextSink',
  'Provider',
  'PROVIDER',
  'ServiceHandler',
  'EndpointSliceHandler',
  'NodeHandler',
  'ServiceCIDRHandler',
  // DI tokens of the host's ports and observers.
  'LOGGER',
  'CLOCK',
  'COMMAND_EXECUTOR',
  'SYSCTL',
  'HOST_FS',
  'HostFs',
  'PROXIER_HEALTH_UPDATER',
  'PROXY_METRICS',
  'METRICS_REGISTRY',
  'MetricsRegistry',
  'SERVICE_HEALTH_SERVER',
  'resolveObservers',
  'resolveOptional',
  'resolveBackendPorts',
  // Helpers a backend builds on.
  'ProxierBase',
  'SyncingProxier',
  'newSyncStats',
  'defineBackend',
  'ProxyState',
  'DualStackProvider',
  'planServicePort',
  'endpointSetOf',
  'planNodePortAddresses',
  'BoundedFrequencyRunner',
  'ConntrackCleaner',
  'reportSuccessfulSync',
  'writeDryRunBlock',
  'commentText',
  'quotedCommentText',
  'assertRestoreLine',
  'assertRestorePayload',
  'restoreLineProblem',
  'UnsafeRestoreTextError',
  // For a backend's own tests.
  'fakeContainer',
  'testContext',
  'TEST_HOST',
  'StringSink',
];

/**
 * Types a plugin implements or writes values of: a new required member breaks it (an object literal
 * or class written for v1 lacks it), so for these only optional members are additions.
 */
export const PLUGIN_WRITTEN: ReadonlySet<string> = new Set([
  'BackendPlugin',
  'DetectResult',
  'Provider',
  'ServiceHandler',
  'EndpointSliceHandler',
  'NodeHandler',
  'ServiceCIDRHandler',
  'TextSink',
  'ProxierBaseOptions',
  'ProxyStateOptions',
  'BoundedFrequencyRunnerOptions',
  'ConntrackCleanerOptions',
  'ServicePlanContext',
]);

export interface SdkSurface {
  /** @kube-proxy/core's package.json version when the surface was recorded. */
  readonly version: string;
  readonly apiVersion: string;
  /** Object.keys of core's index, sorted. */
  readonly runtimeExports: readonly string[];
  /** Per SDK symbol, its declaration as the .d.ts has it, comments and private members dropped, line by line. */
  readonly sdk: Readonly<Record<string, readonly string[]>>;
}

export interface SurfaceDiff {
  readonly runtimeAdded: readonly string[];
  readonly runtimeRemoved: readonly string[];
  readonly sdkAdded: readonly string[];
  /** Declarations that only gained members (or trailing optional parameters). */
  readonly sdkExtended: readonly string[];
  readonly sdkRemoved: readonly string[];
  /** Declarations with a member removed or changed, or a required member added to a PLUGIN_WRITTEN type. */
  readonly sdkChanged: readonly string[];
}

export type SurfaceVerdict =
  | { readonly kind: 'same' }
  /** The change is allowed by the versions: rewrite the snapshot (UPDATE_SDK_SURFACE=1). */
  | { readonly kind: 'record'; readonly message: string }
  /** The change needs a version bump first; the snapshot must not be rewritten. */
  | { readonly kind: 'refuse'; readonly message: string };

export const UPDATE_COMMAND = 'UPDATE_SDK_SURFACE=1 npx nx test core';

function setDiff(a: readonly string[], b: readonly string[]): string[] {
  const other = new Set(b);
  return a.filter((x) => !other.has(x));
}

/** A line the new declaration has that the old one lacks, and whether it is a required member. */
function isRequiredMember(line: string): boolean {
  const member = line.trim();
  if (member === '' || member === '}' || member === '};' || member.startsWith('static ')) return false;
  // `name?: T`, `name?(…)`: optional. Anything else declaring a name is required.
  return !/^(?:(?:readonly|public|protected|abstract)\s+)*[\w$]+\?\s*[:(]/.test(member);
}

/** `f(a: A): R` → `f(a: A, b?: B): R`: only optional parameters appended at the end of a list. */
function onlyAppendsOptionalParameters(before: string, after: string): boolean {
  let p = 0;
  while (p < before.length && before[p] === after[p]) p++;
  let s = 0;
  while (s < before.length - p && before[before.length - 1 - s] === after[after.length - 1 - s]) s++;
  if (p + s !== before.length) return false;
  const inserted = after.slice(p, after.length - s);
  const rest = before.slice(p);
  return rest.startsWith(')') && /^(?:,\s*)?[\w$]+\?: [^()]+$/.test(inserted) && (inserted.startsWith(',') || before[p - 1] === '(');
}

/** Parameter names are no part of a signature's type: `(_node: V1Node)` and `(node: V1Node)` agree. */
function shape(line: string): string {
  return line.replace(/([(,]\s*)((?:\.\.\.)?)[\w$]+(\??: )/g, '$1$2_$3');
}

/** Multiset inclusion of `before`'s lines in `after`'s, pairing a changed line with its widened form. */
function declarationChange(name: string, recorded: readonly string[], current: readonly string[]): 'same' | 'extended' | 'changed' {
  const before = recorded.map(shape);
  const after = current.map(shape);
  if (before.length === after.length && before.every((l, i) => l === after[i])) return 'same';
  const unmatched = [...after];
  const missing: string[] = [];
  for (const line of before) {
    const at = unmatched.indexOf(line);
    if (at >= 0) unmatched.splice(at, 1);
    else missing.push(line);
  }
  for (const line of missing) {
    const at = unmatched.findIndex((l) => onlyAppendsOptionalParameters(line, l));
    if (at < 0) return 'changed';
    unmatched.splice(at, 1);
  }
  if (PLUGIN_WRITTEN.has(name) && unmatched.some(isRequiredMember)) return 'changed';
  // A new abstract member is one more thing every subclass must write.
  if (unmatched.some((l) => /(^|\s)abstract\s/.test(l.trim()) && !l.includes(' class '))) return 'changed';
  return 'extended';
}

export function diffSdkSurface(recorded: SdkSurface, current: SdkSurface): SurfaceDiff {
  const sdkExtended: string[] = [];
  const sdkChanged: string[] = [];
  for (const [name, lines] of Object.entries(recorded.sdk)) {
    const now = current.sdk[name];
    if (now === undefined) continue;
    const change = declarationChange(name, lines, now);
    if (change === 'extended') sdkExtended.push(name);
    if (change === 'changed') sdkChanged.push(name);
  }
  return {
    runtimeAdded: setDiff(current.runtimeExports, recorded.runtimeExports),
    runtimeRemoved: setDiff(recorded.runtimeExports, current.runtimeExports),
    sdkAdded: setDiff(Object.keys(current.sdk), Object.keys(recorded.sdk)),
    sdkExtended,
    sdkRemoved: setDiff(Object.keys(recorded.sdk), Object.keys(current.sdk)),
    sdkChanged,
  };
}

function parseVersion(v: string): readonly [number, number, number] | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** Whether `to` is at least the next minor (or major) release after `from`. */
export function isMinorBump(from: string, to: string): boolean {
  const a = parseVersion(from);
  const b = parseVersion(to);
  if (!a || !b) return false;
  return b[0] > a[0] || (b[0] === a[0] && b[1] > a[1]);
}

function list(label: string, names: readonly string[]): string | undefined {
  if (names.length === 0) return undefined;
  const shown = names.slice(0, 8).join(', ');
  return `${label}: ${shown}${names.length > 8 ? ` (+${names.length - 8} more)` : ''}`;
}

export function describeSurfaceDiff(d: SurfaceDiff): string {
  return [
    list('SDK removed', d.sdkRemoved),
    list('SDK changed', d.sdkChanged),
    list('SDK added', d.sdkAdded),
    list('SDK extended', d.sdkExtended),
    list('runtime exports removed', d.runtimeRemoved),
    list('runtime exports added', d.runtimeAdded),
  ]
    .filter((x) => x !== undefined)
    .join('; ');
}

/**
 * Whether `current` may replace `recorded`: any difference needs a minor bump of @kube-proxy/core
 * over the recorded version; removing or changing an SDK declaration also needs a new
 * BACKEND_PLUGIN_API_VERSION, because a v1 plugin may depend on what went away.
 */
export function judgeSdkSurface(recorded: SdkSurface, current: SdkSurface): SurfaceVerdict {
  const d = diffSdkSurface(recorded, current);
  const differs =
    d.runtimeAdded.length + d.runtimeRemoved.length + d.sdkAdded.length + d.sdkExtended.length + d.sdkRemoved.length + d.sdkChanged.length > 0 ||
    recorded.apiVersion !== current.apiVersion;
  if (!differs) return { kind: 'same' };
  const what = describeSurfaceDiff(d);
  const breaking = d.sdkRemoved.length + d.sdkChanged.length > 0;
  if (breaking && current.apiVersion === recorded.apiVersion) {
    return {
      kind: 'refuse',
      message:
        `the SDK surface changed incompatibly (${what}) but BACKEND_PLUGIN_API_VERSION is still ${recorded.apiVersion}: ` +
        `a v1 plugin may use what was removed or changed. Keep the old declaration, or introduce a new apiVersion ` +
        `(the host accepting the old one as README's compatibility policy says), bump @kube-proxy/core's version and run \`${UPDATE_COMMAND}\``,
    };
  }
  if (current.version === recorded.version || !isMinorBump(recorded.version, current.version)) {
    const bumped = current.version === recorded.version ? '' : ` (${recorded.version} → ${current.version} is not a minor bump)`;
    return {
      kind: 'refuse',
      message:
        `the SDK surface changed${bumped}: bump @kube-proxy/core's version (minor for additions, apiVersion for breaking changes) ` +
        `and run \`${UPDATE_COMMAND}\`. Changes: ${what}`,
    };
  }
  return {
    kind: 'record',
    message: `the SDK surface changed and @kube-proxy/core went ${recorded.version} → ${current.version}: record it with \`${UPDATE_COMMAND}\`. Changes: ${what}`,
  };
}
