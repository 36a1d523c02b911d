/**
 * The scale-growth benchmark's printed tables (markdown): each size's phases, and the per-unit growth
 * ratios between sizes (growth-ratios.ts).
 */
import { formatMiB, formatMs, formatPerUnit, formatRatio, growth, retainedBytes, type GrowthRow, type ScenarioRun } from './growth-ratios.js';
import type { ScenarioResult } from './scale-growth-scenario.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function scenarioTable(r: ScenarioResult): string[] {
  const out = [
    `### ${r.label}`,
    '',
    `${plural(r.services, 'Service')}, ${plural(r.slices, 'EndpointSlice')}, ${plural(r.endpoints, 'endpoint')}; API list bodies ${formatMiB(r.inputBytes, false)}; ` +
      `payload ${formatMiB(r.payloadBytes, false)} / ${r.payloadLines} lines / ${r.natRules} nat rules` +
      (r.kernelNatRules !== undefined ? ` (iptables-legacy-save after the restore: ${r.kernelNatRules} nat rules)` : ''),
    '',
    `| phase | wall | CPU (node) | GC pauses | wall per ${r.unitName} | heap Δ | external Δ | retained per ${r.unitName} | RSS after |`,
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const p of r.phases) {
    if (p.skipped !== undefined) {
      out.push(`| ${p.phase} | skipped: ${p.skipped} | | | | | | | ${formatMiB(p.rss, false)} |`);
      continue;
    }
    out.push(
      `| ${p.phase} | ${formatMs(p.ms)} | ${formatMs(p.cpuMs)}${p.childCpuMs > 0 ? ` + ${formatMs(p.childCpuMs)} child` : ''} | ${formatMs(p.gcMs)} | ${formatPerUnit(p.ms, r.units, 'ms')} | ${formatMiB(p.heapDelta)} | ${formatMiB(p.externalDelta)} | ` +
        `${formatPerUnit(retainedBytes(p), r.units, 'bytes')} | ${formatMiB(p.rss, false)} |`,
    );
  }
  if (r.runWalls) {
    out.push('', `Wall time of each run: ${r.phases.map((p, i) => `${p.phase} ${r.runWalls!.map((w) => (Number.isNaN(w[i]) ? '–' : formatMs(w[i]!))).join(' / ')}`).join('; ')}`);
  }
  return out;
}

export interface GrowthPair {
  /** Column heading, e.g. "10000÷1000". */
  readonly label: string;
  readonly from: ScenarioRun;
  readonly to: ScenarioRun;
}

/** One row per phase: for every pair the time ratio, then the time-less-GC ratio, then the retained-memory ratio. */
export function growthTable(pairs: readonly GrowthPair[]): string[] {
  const rows = pairs.map((p) => growth(p.from, p.to));
  const first = rows[0];
  if (first === undefined) return [];
  const columns = (f: (p: GrowthPair) => string) => pairs.map(f).join(' | ');
  const out = [
    `| phase | ${columns((p) => `time ${p.label}`)} | ${columns((p) => `time − GC ${p.label}`)} | ${columns((p) => `memory ${p.label}`)} |`,
    `|---|${'---|'.repeat(3 * pairs.length)}`,
  ];
  first.forEach(({ phase }, i) => {
    const cells = (pick: (g: GrowthRow) => number | null) => rows.map((r) => formatRatio(r[i] ? pick(r[i]) : null)).join(' | ');
    out.push(`| ${phase} | ${cells((g) => g.time)} | ${cells((g) => g.timeLessGc)} | ${cells((g) => g.memory)} |`);
  });
  return out;
}

/** The same run judged per endpoint instead of per Service (to compare one big Service with many small ones). */
export function perEndpoint(r: ScenarioResult): ScenarioRun {
  return { label: r.label, units: r.endpoints, phases: r.phases };
}
