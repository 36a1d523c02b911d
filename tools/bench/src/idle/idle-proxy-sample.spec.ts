import { cpuTicks, cpuTicksOfStat, cpuTimeline, idleFigures } from './idle-proxy-sample.js';

describe('idle process figures', () => {
  it("reads utime + stime and the reaped children's cutime + cstime of a stat line whose command name holds spaces and parentheses", () => {
    const line = '4242 (node (kube) proxy) S 1 4242 4242 0 -1 4194560 12345 0 0 0 731 269 40 2 20 0 11 0 5000 1000000 60000';
    expect(cpuTicksOfStat(line)).toEqual({ own: 731 + 269, children: 40 + 2 });
  });

  it("reads this process's own CPU time, which grows as it works", () => {
    const before = cpuTicks(process.pid)!.own;
    const until = Date.now() + 150;
    let spin = 0;
    while (Date.now() < until) spin++;
    expect(spin).toBeGreaterThan(0);
    expect(cpuTicks(process.pid)!.own).toBeGreaterThan(before);
  });

  it('gives the CPU share over the window and the RSS spread', () => {
    const figures = idleFigures([
      { atMs: 0, cpuTicks: { own: 1000, children: 50 }, rssKiB: 300_000 },
      { atMs: 10_000, cpuTicks: { own: 1010, children: 50 }, rssKiB: 900_000 },
      { atMs: 20_000, cpuTicks: { own: 1020, children: 90 }, rssKiB: 310_000 },
    ]);
    // 20 ticks = 0.2 s of CPU over 20 s; the children's 40 ticks, 0.4 s.
    expect(figures).toEqual({ windowS: 20, cpuPercent: 1, childCpuPercent: 2, rssMinKiB: 300_000, rssMedianKiB: 310_000, rssMaxKiB: 900_000 });
  });

  it('puts the CPU ticks into the time buckets they were used in', () => {
    const at = (atMs: number, own: number) => ({ atMs, cpuTicks: { own, children: 0 }, rssKiB: 1 });
    expect(cpuTimeline([at(0, 100), at(500, 100), at(1000, 103), at(1500, 103), at(2000, 103), at(2500, 110), at(3008, 111)], 1000)).toEqual([3, 0, 8]);
  });
});
