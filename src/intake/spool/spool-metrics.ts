import { makeCounterProvider, makeGaugeProvider } from '@willsoto/nestjs-prometheus';

export const SPOOL_DELIVERIES = 'payment_spool_deliveries';
export const SPOOL_OLDEST_AGE = 'payment_spool_oldest_age_seconds';
export const SPOOL_BYTES = 'payment_spool_bytes';
export const SPOOL_QUARANTINED = 'payment_spool_quarantined_total';

export const SPOOL_METRICS = [
  makeGaugeProvider({
    name: SPOOL_DELIVERIES,
    help: 'Acked deliveries in the spool not yet applied: state "pending" (waiting for the database), "parked" (replayed, not applicable yet: retried with backoff)',
    labelNames: ['state'],
  }),
  makeGaugeProvider({
    name: SPOOL_OLDEST_AGE,
    help: 'Age of the oldest delivery in the spool (pending or parked), 0 when empty',
  }),
  makeGaugeProvider({ name: SPOOL_BYTES, help: 'Bytes the spool holds on disk (segments and parked files)' }),
  makeCounterProvider({
    name: SPOOL_QUARANTINED,
    help: 'Corrupt or torn stretches of the spool moved to its quarantine directory',
  }),
];
