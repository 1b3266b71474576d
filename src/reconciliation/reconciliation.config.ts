import { registerAs } from '@nestjs/config';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { validateEnv } from '../platform/config/env-validation';

class ReconciliationEnv {
  @IsOptional()
  @Matches(/^(off|([01]\d|2[0-3]):[0-5]\d)$/, {
    message: 'RECONCILE_AT must be a Beijing time of day HH:MM (e.g. 10:30), or off',
  })
  RECONCILE_AT?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(86400)
  RECONCILE_RETRY_SECONDS?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(3600)
  RECONCILE_BOUNDARY_SECONDS?: number;

  @IsOptional()
  @IsInt()
  @Min(10)
  @Max(3600000)
  RECONCILE_POLL_INTERVAL_MS?: number;
}

export interface ReconciliationConfig {
  /** Minutes after midnight, Beijing time, from which the previous day is reconciled; undefined: no schedule. */
  dailyAtMinute?: number;
  /** How long after a NOT_READY or FAILED run it is tried again. */
  retrySeconds: number;
  /** A local record this close to midnight may be on the neighbouring day's bill. */
  boundarySeconds: number;
  pollIntervalMs: number;
}

export function loadReconciliationConfig(env: NodeJS.ProcessEnv = process.env): ReconciliationConfig {
  const vars = validateEnv(ReconciliationEnv, env);
  const at = vars.RECONCILE_AT ?? '10:30';
  return {
    dailyAtMinute: at === 'off' ? undefined : Number(at.slice(0, 2)) * 60 + Number(at.slice(3)),
    retrySeconds: vars.RECONCILE_RETRY_SECONDS ?? 3600,
    boundarySeconds: vars.RECONCILE_BOUNDARY_SECONDS ?? 300,
    pollIntervalMs: vars.RECONCILE_POLL_INTERVAL_MS ?? 60000,
  };
}

export const reconciliationConfig = registerAs('reconciliation', () => loadReconciliationConfig());
