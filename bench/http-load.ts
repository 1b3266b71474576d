import { Pool } from 'undici';
import { Delivery } from './delivery-mix';

export interface LoadResult {
  seconds: number;
  latenciesMs: number[];
  errors: number;
  nonSuccessAcks: number;
  acked: Set<Delivery>;
}

/**
 * Fixed concurrency: `concurrency` workers on keep-alive connections, each sending the next delivery
 * when its last is answered, to the replicas in turn (see replicaFor).
 */
export async function drive(baseUrls: string[], deliveries: Delivery[], concurrency: number): Promise<LoadResult> {
  const pools = baseUrls.map((url) => new Pool(url, { connections: concurrency, pipelining: 1 }));
  const latenciesMs: number[] = [];
  const acked = new Set<Delivery>();
  let errors = 0;
  let nonSuccessAcks = 0;
  let next = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < deliveries.length) {
      const sequence = next++;
      const delivery = deliveries[sequence];
      const sent = process.hrtime.bigint();
      try {
        const response = await pools[replicaFor(sequence, pools.length)].request({
          method: 'POST',
          path: delivery.path,
          headers: delivery.headers,
          body: delivery.body,
        });
        const text = await response.body.text();
        latenciesMs.push(Number(process.hrtime.bigint() - sent) / 1e6);
        if (response.statusCode === 204 || (response.statusCode === 200 && text === 'success')) acked.add(delivery);
        else nonSuccessAcks++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await Promise.all(pools.map((pool) => pool.close()));
  return { seconds, latenciesMs, errors, nonSuccessAcks, acked };
}

/**
 * Round robin over the arrival order, as a load balancer without affinity spreads requests: the
 * deliveries of one payment, wherever they are in the order, land on any replica, so concurrent
 * repeats race each other across processes and meet only in the database.
 */
export function replicaFor(sequence: number, replicas: number): number {
  return sequence % replicas;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
