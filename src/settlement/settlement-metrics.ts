import { makeCounterProvider } from '@willsoto/nestjs-prometheus';

export const SPOOL_REPLAYED = 'payment_spool_replayed_total';

export const SETTLEMENT_METRICS = [
  makeCounterProvider({
    name: SPOOL_REPLAYED,
    help: 'Spooled deliveries replayed, by channel and outcome (PAID, DUPLICATE, …; PARKED when not applicable yet)',
    labelNames: ['channel', 'outcome'],
  }),
];
