import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULTED_MODE_WARNING, IPVS_DEPRECATION_WARNING } from '../mode/select-mode.js';

// The README quotes the warnings the proxy logs; they must stay word for word what it logs.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const README = readFileSync(`${ROOT}README.md`, 'utf8');

function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  expect(start).toBeGreaterThan(0);
  // Line breaks and list indentation are layout, not words.
  return README.slice(start, README.indexOf('\n## ', start + 1)).replace(/\s+/g, ' ');
}

describe('README: gates, flags and IPVS after upstream', () => {
  it('"IPVS after upstream v1.43" follows "IPVS mode" and quotes the IPVS warning the proxy logs', () => {
    expect(README.indexOf('\n## IPVS after upstream v1.43\n')).toBeGreaterThan(README.indexOf('\n## IPVS mode\n'));
    expect(README.indexOf('\n## IPVS after upstream v1.43\n')).toBeLessThan(README.indexOf('\n## Userspace mode\n'));
    expect(section('IPVS after upstream v1.43')).toContain(`"${IPVS_DEPRECATION_WARNING}"`);
  });

  it('"The CLI" quotes the defaulted-mode warning and names the v1.37 gates', () => {
    const cli = section('The CLI');
    expect(cli).toContain(`"${DEFAULTED_MODE_WARNING}"`);
    for (const gate of ['KubeProxyIPVS', 'AllowServiceExternalIPs', 'NFTablesNetlink', 'ComponentStatusz', 'ComponentFlagz']) expect(cli).toContain(`\`${gate}\``);
    expect(cli).toContain('unknown flag: --healthz-port');
  });
});
