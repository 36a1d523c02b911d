import { PassThrough } from 'node:stream';
import type { CliIO } from '../run.js';

/** CliIO whose stdout and stderr are collected as text, for running the CLI in-process in specs. */
export function captureIO(): { streams: CliIO; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  return { streams: { stdout, stderr }, out: () => out, err: () => err };
}
