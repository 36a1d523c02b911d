import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePerfData, readPerfDataDir } from './perf-data.js';
import { SAMPLE_NFTABLES, SAMPLE_USERSPACE } from './testing/sample-perf-data.js';

describe('perf data files', () => {
  it('reads back what a bench records', () => {
    expect(parsePerfData(JSON.stringify(SAMPLE_NFTABLES, null, 2), 'nftables-scale')).toEqual(SAMPLE_NFTABLES);
  });

  it('rejects an id that is not the file name, an unknown mode or metric, and a non-numeric value', () => {
    const bad = (patch: (d: Record<string, unknown>) => void) => {
      const d = JSON.parse(JSON.stringify(SAMPLE_NFTABLES)) as Record<string, unknown>;
      patch(d);
      return () => parsePerfData(JSON.stringify(d), 'nftables-scale');
    };
    expect(bad((d) => (d['id'] = 'other'))).toThrow(/does not match/);
    expect(bad((d) => ((d['series'] as Record<string, unknown>[])[0]!['mode'] = 'ebpf'))).toThrow(/series\[0\]\.mode/);
    expect(bad((d) => ((d['series'] as Record<string, unknown>[])[0]!['metric'] = 'cold-start'))).toThrow(/metric/);
    expect(bad((d) => (((d['series'] as Record<string, unknown>[])[0]!['points'] as Record<string, unknown>[])[0]!['value'] = '1 s'))).toThrow(/points\[0\]\.value/);
    expect(bad((d) => (d['load1'] = [1]))).toThrow(/load1/);
  });

  it('reads a folder sorted by id, skipping malformed files with the reason, and a missing folder as empty', () => {
    const dir = mkdtempSync(join(tmpdir(), 'perf-data-'));
    try {
      writeFileSync(join(dir, 'userspace-scale.json'), JSON.stringify(SAMPLE_USERSPACE));
      writeFileSync(join(dir, 'nftables-scale.json'), JSON.stringify(SAMPLE_NFTABLES));
      writeFileSync(join(dir, 'broken.json'), '{"id": "broken",');
      writeFileSync(join(dir, 'notes.txt'), 'not data');
      const set = readPerfDataDir(dir);
      expect(set.files.map((f) => f.id)).toEqual(['nftables-scale', 'userspace-scale']);
      expect(set.problems).toHaveLength(1);
      expect(set.problems[0]).toMatch(/^broken\.json: /);
      expect(readPerfDataDir(join(dir, 'absent'))).toEqual({ files: [], problems: [] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
