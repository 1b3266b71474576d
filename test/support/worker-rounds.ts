import { PollingWorker } from '../../src/platform/lifecycle/polling-worker';
import { eventually } from './eventually';

/** The rounds each watched worker has finished (successfully or not) since it was first watched. */
const finished = new WeakMap<PollingWorker, { count: number }>();

function watch(worker: PollingWorker): { count: number } {
  let rounds = finished.get(worker);
  if (rounds) return rounds;
  const counted = { count: 0 };
  // pollOnce is the round itself (protected): it is wrapped to count, and runs exactly as before.
  const target = worker as unknown as { pollOnce: () => Promise<boolean> };
  const round = target.pollOnce.bind(worker);
  target.pollOnce = async () => {
    try {
      return await round();
    } finally {
      counted.count++;
    }
  };
  finished.set(worker, counted);
  rounds = counted;
  return rounds;
}

/**
 * Starts counting the rounds of `workers` now; the answer waits until each of them has finished a
 * whole round that started after this call, so that the round read whatever was committed before
 * the call. Two finished rounds: a round already in progress at the call may be the first.
 */
export function roundsFrom(...workers: PollingWorker[]): (what: string, timeoutMs?: number) => Promise<void> {
  const watched = workers.map((worker) => {
    const rounds = watch(worker);
    return { rounds, from: rounds.count };
  });
  return (what, timeoutMs = 30_000) =>
    eventually(
      `a whole round of each worker after ${what}`,
      () => watched.every(({ rounds, from }) => rounds.count >= from + 2),
      timeoutMs,
    );
}
