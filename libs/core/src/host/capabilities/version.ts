/** Numeric dotted versions ("1.8.9", "5.13", kernel "6.18.44-fc-v782"), compared part by part. */
export type Version = readonly number[];

/** The first dotted number in `text` ("iptables v1.8.9 (nf_tables)" → [1, 8, 9]), if any. */
export function parseVersion(text: string): Version | undefined {
  const m = /(\d+(?:\.\d+)+)/.exec(text);
  return m ? m[1].split('.').map(Number) : undefined;
}

/** Negative, zero or positive as a < b, a == b, a > b; missing parts count as 0. */
export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export function versionAtLeast(version: Version | undefined, minimum: string): boolean {
  return version !== undefined && compareVersions(version, parseVersion(minimum) ?? []) >= 0;
}

export function formatVersion(v: Version): string {
  return v.join('.');
}
