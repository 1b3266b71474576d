import { makeCounterProvider } from '@willsoto/nestjs-prometheus';

export const FAST_PATH_HITS = 'notify_fast_path_hits_total';
export const REDIS_ERRORS = 'redis_fast_path_errors_total';

export const FAST_PATH_METRICS = [
  makeCounterProvider({
    name: FAST_PATH_HITS,
    help: 'Repeated payment deliveries answered without a transaction, by where the commit was known: "memory" (this replica saw it), "redis" (another replica did, REDIS_URL)',
    labelNames: ['source'],
  }),
  makeCounterProvider({
    name: REDIS_ERRORS,
    help: 'Failed Redis calls of the fast path, by operation (connection, lookup, mark, claim, wait, release); each one fell through to the database',
    labelNames: ['operation'],
  }),
];
