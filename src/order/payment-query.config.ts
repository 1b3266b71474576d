import { registerAs } from '@nestjs/config';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { ConfigurationError, validateEnv } from '../platform/config/env-validation';

const DEFAULT_SCHEDULE = [60, 300, 900, 1800, 3600, 7200, 21600, 86400];

class PaymentQueryEnv {
  @IsOptional()
  @Matches(/^\s*\d+(\s*,\s*\d+)*\s*$/, {
    message: 'PAYMENT_QUERY_SCHEDULE_SECONDS must be comma-separated whole seconds, e.g. 60,300,900',
  })
  PAYMENT_QUERY_SCHEDULE_SECONDS?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(64)
  PAYMENT_QUERY_CONCURRENCY?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  PAYMENT_QUERY_RATE_PER_SECOND?: number;

  @IsOptional()
  @IsInt()
  @Min(10)
  @Max(600000)
  PAYMENT_QUERY_POLL_INTERVAL_MS?: number;
}

export interface PaymentQueryConfig {
  /** Ages (seconds since registration) at which a WAIT_PAY order is asked about; strictly increasing. */
  scheduleSeconds: number[];
  concurrency: number;
  ratePerSecond: number;
  pollIntervalMs: number;
}

export function loadPaymentQueryConfig(env: NodeJS.ProcessEnv = process.env): PaymentQueryConfig {
  const vars = validateEnv(PaymentQueryEnv, env);
  const schedule = vars.PAYMENT_QUERY_SCHEDULE_SECONDS?.split(',').map((s) => Number(s.trim())) ?? DEFAULT_SCHEDULE;
  if (schedule.some((age, i) => age <= 0 || (i > 0 && age <= schedule[i - 1]))) {
    throw new ConfigurationError(
      'Invalid configuration:\n  - PAYMENT_QUERY_SCHEDULE_SECONDS: ages must be positive and strictly increasing',
    );
  }
  return {
    scheduleSeconds: schedule,
    concurrency: vars.PAYMENT_QUERY_CONCURRENCY ?? 4,
    ratePerSecond: vars.PAYMENT_QUERY_RATE_PER_SECOND ?? 20,
    pollIntervalMs: vars.PAYMENT_QUERY_POLL_INTERVAL_MS ?? 1000,
  };
}

/** When an order registered at `createdAt` is next asked about, seen at `now`; null after the last age. */
export function nextQueryAt(scheduleSeconds: number[], createdAt: Date, now: Date): Date | null {
  const ageSeconds = (now.getTime() - createdAt.getTime()) / 1000;
  const next = scheduleSeconds.find((age) => age > ageSeconds);
  return next === undefined ? null : new Date(createdAt.getTime() + next * 1000);
}

export const paymentQueryConfig = registerAs('paymentQuery', () => loadPaymentQueryConfig());
