/**
 * Reads the deploy/ manifests the way kubectl would see them, for the specs that check them: every YAML
 * document of every file (kustomization.yaml excepted: it is kustomize's input, not an API object), and
 * the same objects as `kubectl kustomize` renders them, so a spec can prove the two agree.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';

export const DEPLOY_DIR = fileURLToPath(new URL('../../../../../deploy', import.meta.url));

export type ApiObject = Record<string, unknown> & {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
};

export interface DeployDocument {
  readonly file: string;
  readonly object: ApiObject;
}

export function readDeployDocuments(dir: string = DEPLOY_DIR): DeployDocument[] {
  const files = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
    .sort();
  return files.flatMap((file) => parseDocuments(readFileSync(join(dir, file), 'utf8'), file).map((object) => ({ file, object })));
}

/** One object per non-empty document; anything that is not an API object is an error, not a skip. */
export function parseDocuments(text: string, file: string): ApiObject[] {
  return yaml
    .loadAll(text, undefined, { filename: file })
    .filter((doc) => doc !== null && doc !== undefined)
    .map((doc, i) => {
      const o = doc as Partial<ApiObject>;
      if (typeof o !== 'object' || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string' || typeof o.metadata?.name !== 'string') {
        throw new Error(`${file}: document ${i + 1} is not a Kubernetes object (apiVersion, kind, metadata.name)`);
      }
      return o as ApiObject;
    });
}

/** kind/namespace/name: what identifies an object to the API server (and to kustomize). */
export function objectKey(o: ApiObject): string {
  return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** Whether `kubectl` can be started at all (its absence is a reason to skip, anything else is a failure). */
export function kubectlInstalled(kubectl = 'kubectl'): boolean {
  const run = spawnSync(kubectl, ['version', '--client'], { encoding: 'utf8', timeout: 30_000 });
  return (run.error as NodeJS.ErrnoException | undefined)?.code !== 'ENOENT';
}

/** `kubectl kustomize DIR`: offline (kustomize reads only the files), bounded by a timeout. */
export function kustomize(dir: string = DEPLOY_DIR, kubectl = 'kubectl'): ApiObject[] {
  const run = spawnSync(kubectl, ['kustomize', dir], { encoding: 'utf8', timeout: 30_000 });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`kubectl kustomize ${dir} exited ${run.status}: ${run.stderr}`);
  return parseDocuments(run.stdout, 'kubectl kustomize');
}
