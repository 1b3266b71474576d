import { Injectable } from '@nestjs/common';
import { InjectMetric, makeGaugeProvider, makeHistogramProvider } from '@willsoto/nestjs-prometheus';
import { Gauge, Histogram } from 'prom-client';

const DATABASE_POOL_WAITING = 'database_pool_waiting';
const DATABASE_POOL_ACQUIRE_SECONDS = 'database_pool_acquire_seconds';

/** What one pool's callers wait for a connection, as database_pool_waiting and database_pool_acquire_seconds. */
export interface PoolWaits {
  waiting: { inc(): void; dec(): void };
  waited: { observe(seconds: number): void };
}

/** The pool-wait metrics by pool: `notify` (DATABASE_POOL_SIZE) and `reporting` (REPORTING_POOL_SIZE). */
@Injectable()
export class PoolWaitMetrics {
  constructor(
    @InjectMetric(DATABASE_POOL_WAITING) private readonly waiting: Gauge<string>,
    @InjectMetric(DATABASE_POOL_ACQUIRE_SECONDS) private readonly waited: Histogram<string>,
  ) {}

  of(pool: 'notify' | 'reporting'): PoolWaits {
    return { waiting: this.waiting.labels({ pool }), waited: this.waited.labels({ pool }) };
  }
}

export const POOL_WAIT_METRICS = [
  makeGaugeProvider({
    name: DATABASE_POOL_WAITING,
    help: 'Callers waiting for a database connection now, by pool (notify: DATABASE_POOL_SIZE, reporting: REPORTING_POOL_SIZE)',
    labelNames: ['pool'],
  }),
  makeHistogramProvider({
    name: DATABASE_POOL_ACQUIRE_SECONDS,
    help: 'Time each caller waited for a database connection, by pool, until it got one, found the queue full, or gave up at DATABASE_POOL_ACQUIRE_TIMEOUT_MS',
    labelNames: ['pool'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  }),
  PoolWaitMetrics,
];
