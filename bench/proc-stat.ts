import { readFileSync } from 'node:fs';

const CLOCK_TICKS = 100; // USER_HZ on Linux

/**
 * utime + stime, in seconds, from a /proc/<pid>/stat line (all the process's threads). The fields
 * are counted from the last ')': the command name before it may itself hold spaces or parentheses.
 */
export function cpuSecondsOfStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime] = [Number(fields[11]), Number(fields[12])];
  if (!Number.isInteger(utime) || !Number.isInteger(stime)) throw new Error(`not a /proc/<pid>/stat line: ${stat}`);
  return (utime + stime) / CLOCK_TICKS;
}

export function processCpuSeconds(pid: number): number {
  return cpuSecondsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** The peak resident set size (VmHWM) of a live process, in MiB. */
export function peakRssMiB(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}
