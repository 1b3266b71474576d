import { PollingWorker } from '../../src/platform/lifecycle/polling-worker';
import { eventually } from './eventually';

/** Per watched object and method: the calls of it that have finished (successfully or not) since it was first watched. */
const finished = new WeakMap<object, Map<string, { count: number }>>();

function watch(target: object, method: string): { count: number } {
  const methods = finished.get(target) ?? new Map<string, { count: number }>();
  finished.set(target, methods);
  const known = methods.get(method);
  if (known) return known;
  const counted = { count: 0 };
  // The round is a protected or private method: it is wrapped to count, and runs exactly as before.
  const object = target as Record<string, () => Promise<unknown>>;
  const round = object[method].bind(target);
  object[method] = async () => {
    try {
      return await round();
    } finally {
      counted.count++;
    }
  };
  methods.set(method, counted);
  return counted;
}

/**
 * Starts counting the calls of `method` (a loop's round) on `targets` now; the answer waits until
 * each of them has finished a whole round that started after this call, so that the round read
 * whatever was committed before the call. Two finished rounds: a round already in progress at the
 * call may be the first.
 */
export function roundsOf(method: string, ...targets: object[]): (what: string, timeoutMs?: number) => Promise<void> {
  const watched = targets.map((target) => {
    const rounds = watch(target, method);
    return { rounds, from: rounds.count };
  });
  return (what, timeoutMs = 30_000) =>
    eventually(
      `a whole round of each worker after ${what}`,
      () => watched.every(({ rounds, from }) => rounds.count >= from + 2),
      timeoutMs,
    );
}

/** roundsOf for polling workers, whose round is pollOnce. */
export const roundsFrom = (...workers: PollingWorker[]) => roundsOf('pollOnce', ...workers);
