/**
 * Reads an OCI image layout (image-spec v1.1) and checks what an engine checks before it trusts one:
 * the layout version, every descriptor's mediaType, and that each blob's sha256 and size are the ones
 * its descriptor names. deploy/image/write-oci-layout.sh writes layouts without any OCI tooling, so
 * this is what tells us its output would load; the image smoke test also runs it on the real archive.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';

export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly platform?: { readonly architecture: string; readonly os: string };
}

export interface ImageConfig {
  readonly architecture: string;
  readonly os: string;
  readonly config?: { readonly Entrypoint?: readonly string[]; readonly Env?: readonly string[]; readonly Cmd?: readonly string[] };
  readonly rootfs: { readonly type: string; readonly diff_ids: readonly string[] };
}

export interface OciImage {
  /** org.opencontainers.image.ref.name of the index entry. */
  readonly tag: string | undefined;
  readonly manifest: { readonly config: Descriptor; readonly layers: readonly Descriptor[] };
  readonly config: ImageConfig;
  /** Absolute paths of the layer blobs, bottom first. */
  readonly layerPaths: readonly string[];
}

const DIGEST = /^sha256:([0-9a-f]{64})$/;

function blobPath(layout: string, d: Descriptor, what: string): string {
  const m = DIGEST.exec(d.digest);
  if (!m) throw new Error(`${what}: digest ${JSON.stringify(d.digest)} is not sha256:<64 hex>`);
  return join(layout, 'blobs', 'sha256', m[1]!);
}

function readJson(path: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${what}: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Reads the blob a descriptor names, after checking its size and digest. */
function verifiedBlob(layout: string, d: Descriptor, mediaType: string, what: string): Buffer {
  if (d.mediaType !== mediaType) throw new Error(`${what}: mediaType ${d.mediaType}, expected ${mediaType}`);
  const bytes = readFileSync(blobPath(layout, d, what));
  if (bytes.length !== d.size) throw new Error(`${what}: blob is ${bytes.length} bytes, descriptor says ${d.size}`);
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (digest !== d.digest) throw new Error(`${what}: blob hashes to ${digest}, descriptor says ${d.digest}`);
  return bytes;
}

async function sha256OfFile(path: string, gunzip: boolean): Promise<string> {
  const hash = createHash('sha256');
  if (gunzip) await pipeline(createReadStream(path), createGunzip(), hash);
  else await pipeline(createReadStream(path), hash);
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Verifies the single-image layout at `layout` and returns its parts. Layers are hashed as streams
 * (compressed for the digest, uncompressed for the config's diff_ids), so a real image's layer
 * costs seconds, not memory.
 */
export async function verifyOciLayout(layout: string): Promise<OciImage> {
  const marker = readJson(join(layout, 'oci-layout'), 'oci-layout') as { imageLayoutVersion?: string };
  if (marker.imageLayoutVersion !== '1.0.0') throw new Error(`oci-layout: imageLayoutVersion ${marker.imageLayoutVersion}, expected 1.0.0`);

  const index = readJson(join(layout, 'index.json'), 'index.json') as { schemaVersion?: number; mediaType?: string; manifests?: Descriptor[] };
  if (index.schemaVersion !== 2) throw new Error(`index.json: schemaVersion ${index.schemaVersion}, expected 2`);
  if (index.mediaType !== OCI_INDEX) throw new Error(`index.json: mediaType ${index.mediaType}, expected ${OCI_INDEX}`);
  if (index.manifests?.length !== 1) throw new Error(`index.json: ${index.manifests?.length ?? 0} manifests, expected 1`);
  const entry = index.manifests[0]!;

  const manifest = JSON.parse(verifiedBlob(layout, entry, OCI_MANIFEST, 'manifest').toString('utf8')) as {
    schemaVersion?: number;
    mediaType?: string;
    config: Descriptor;
    layers: Descriptor[];
  };
  if (manifest.schemaVersion !== 2) throw new Error(`manifest: schemaVersion ${manifest.schemaVersion}, expected 2`);
  if (manifest.mediaType !== OCI_MANIFEST) throw new Error(`manifest: mediaType ${manifest.mediaType}, expected ${OCI_MANIFEST}`);
  const config = JSON.parse(verifiedBlob(layout, manifest.config, OCI_CONFIG, 'config').toString('utf8')) as ImageConfig;
  if (entry.platform && (entry.platform.architecture !== config.architecture || entry.platform.os !== config.os)) {
    throw new Error(`index.json: platform ${entry.platform.os}/${entry.platform.architecture} differs from the config's ${config.os}/${config.architecture}`);
  }
  if (config.rootfs?.type !== 'layers' || config.rootfs.diff_ids.length !== manifest.layers.length) {
    throw new Error(`config: rootfs ${JSON.stringify(config.rootfs)} does not list one diff_id per layer (${manifest.layers.length})`);
  }

  const layerPaths: string[] = [];
  for (const [i, layer] of manifest.layers.entries()) {
    const what = `layer ${i}`;
    if (layer.mediaType !== OCI_LAYER_GZIP) throw new Error(`${what}: mediaType ${layer.mediaType}, expected ${OCI_LAYER_GZIP}`);
    const path = blobPath(layout, layer, what);
    const size = statSync(path).size;
    if (size !== layer.size) throw new Error(`${what}: blob is ${size} bytes, descriptor says ${layer.size}`);
    const digest = await sha256OfFile(path, false);
    if (digest !== layer.digest) throw new Error(`${what}: blob hashes to ${digest}, descriptor says ${layer.digest}`);
    const diffId = await sha256OfFile(path, true);
    if (diffId !== config.rootfs.diff_ids[i]) throw new Error(`${what}: uncompressed hash ${diffId}, config's diff_id is ${config.rootfs.diff_ids[i]}`);
    layerPaths.push(path);
  }
  return { tag: entry.annotations?.['org.opencontainers.image.ref.name'], manifest, config, layerPaths };
}
