import { cpuSecondsOfStat, processCpuSeconds } from './proc-stat';

describe('cpuSecondsOfStat', () => {
  it('should add utime and stime, in clock ticks of 1/100 s', () => {
    const stat =
      '3790 (mariadbd) S 1 3789 3789 0 -1 4194560 62717 0 9 0 7259 5833 0 0 20 0 77 0 8971 8797571932160 67606';

    expect(cpuSecondsOfStat(stat)).toBeCloseTo(130.92, 10);
  });

  it('should count the fields from the last parenthesis when the command name holds spaces and parentheses', () => {
    const stat = '42 (a) b (c) R 1 42 42 0 -1 0 0 0 0 0 150 50 0 0 20 0 1 0 100 0 0';

    expect(cpuSecondsOfStat(stat)).toBe(2);
  });

  it('should refuse text that is not a stat line', () => {
    expect(() => cpuSecondsOfStat('no such process')).toThrow('not a /proc/<pid>/stat line');
  });

  it("should read this process's CPU time, which grows while it works", () => {
    const before = processCpuSeconds(process.pid);
    const until = Date.now() + 100;
    while (Date.now() < until) Math.sqrt(Math.random());

    expect(processCpuSeconds(process.pid)).toBeGreaterThan(before);
  });
});
