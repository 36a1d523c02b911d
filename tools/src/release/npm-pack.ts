/**
 * `npm pack` of one library: the tarball npm would publish, and npm's own list of what is in it (the list
 * honours "files", .npmignore and npm's always-included files, which a glob of our own would not).
 */
import { join } from 'node:path';
import { runCommand } from './run-command.js';

export interface PackedTarball {
  readonly path: string;
  readonly files: string[];
}

export async function npmPack(libraryDir: string, destination: string): Promise<PackedTarball> {
  const { stdout } = await runCommand('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], { cwd: libraryDir, timeoutMs: 30_000 });
  const [report] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  if (!report) throw new Error(`npm pack printed no report in ${libraryDir}`);
  return { path: join(destination, report.filename), files: report.files.map((f) => f.path).sort() };
}
