import { rename, writeFile } from 'node:fs/promises';

/**
 * The one state file both families' proxiers share: each sync replaces its family's section and the
 * whole document is rewritten through a temporary file and a rename, so a reader never sees half a
 * file (the two families sync concurrently; writes are chained so they never overlap).
 */
export class EchoStateFile {
  /**
   * @param {string | undefined} path where to write; undefined: keep the state in memory only
   * @param {{ name: string, version: string }} plugin
   */
  constructor(path, plugin) {
    this.path = path;
    this.plugin = plugin;
    /** @type {Record<string, import('./state-snapshot.js').EchoFamilyState>} */
    this.families = {};
    /** @type {Promise<void>} */
    this.tail = Promise.resolve();
  }

  /**
   * Records one family's state and returns the document's text (also what --dry-run prints).
   * @param {string} family
   * @param {import('./state-snapshot.js').EchoFamilyState} state
   * @returns {Promise<string>}
   */
  async update(family, state) {
    this.families[family] = state;
    const text = JSON.stringify({ plugin: this.plugin.name, version: this.plugin.version, families: this.families }, null, 2) + '\n';
    const path = this.path;
    if (path !== undefined) {
      const write = this.tail.then(async () => {
        const tmp = `${path}.tmp-${process.pid}`;
        await writeFile(tmp, text);
        await rename(tmp, path);
      });
      this.tail = write.catch(() => undefined);
      await write;
    }
    return text;
  }
}
