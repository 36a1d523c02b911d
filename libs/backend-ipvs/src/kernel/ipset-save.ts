/**
 * parseIpsetSave: `ipset save` text → set name → its entries, exactly as printed after `add NAME `
 * (the notation batch/ipset-text.ts writes and state/ipset-entry.ts builds), in the order save
 * printed them (kernel hash order: callers that compare sort). A `create` line makes the set known
 * even when it has no entry. ipset 7.17's output in the QEMU guest (fixture in the spec):
 *   create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x048ada21
 *   add KUBE-CLUSTER-IP 10.96.0.10,tcp:80
 * Any other line, or an `add` to a set no `create` line named before, throws, naming the line.
 */

export class IpsetSaveParseError extends Error {
  constructor(lineNo: number, line: string, why: string) {
    super(`ipset save line ${lineNo} ${JSON.stringify(line.slice(0, 200))}: ${why}`);
    this.name = 'IpsetSaveParseError';
  }
}

export function parseIpsetSave(text: string): Map<string, string[]> {
  const sets = new Map<string, string[]>();
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    const fail: (why: string) => never = (why) => {
      throw new IpsetSaveParseError(index + 1, line, why);
    };
    const m = /^(create|add) (\S+) (\S.*)$/.exec(line);
    if (m === null) fail('neither a create nor an add line');
    const [, verb, name, rest] = m;
    if (verb === 'create') {
      if (sets.has(name)) fail(`set ${name} created twice`);
      sets.set(name, []);
      return;
    }
    const entries = sets.get(name);
    if (entries === undefined) fail(`entry of set ${name}, which no create line named before`);
    entries.push(rest.trimEnd());
  });
  return sets;
}
