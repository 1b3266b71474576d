import { registerAs } from '@nestjs/config';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { validateEnv } from './env-validation';

class RetentionEnv {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(36500)
  RETENTION_RAW_DAYS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(36500)
  RETENTION_EVENTS_DAYS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(36500)
  RETENTION_REFUSED_DAYS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10000)
  RETENTION_BATCH_SIZE?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(60000)
  RETENTION_BATCH_PAUSE_MS?: number;

  @IsOptional()
  @IsInt()
  @Min(10)
  @Max(86400000)
  RETENTION_INTERVAL_MS?: number;
}

export interface RetentionConfig {
  /** Days the raw bytes (and large headers) of a delivery are kept; the row and its outcome stay. */
  rawDays: number;
  /** Days published outbox events and consumers' processed_event rows are kept. */
  eventsDays: number;
  /** Days a refused notification is kept after it was last refused, and the hourly counts of its cap. */
  refusedDays: number;
  /** Rows per statement. */
  batchSize: number;
  /** Pause between batches, so that the prune never monopolises the database. */
  batchPauseMs: number;
  /** Pause between prunes once nothing is left to prune. */
  intervalMs: number;
}

export function loadRetentionConfig(env: NodeJS.ProcessEnv = process.env): RetentionConfig {
  const vars = validateEnv(RetentionEnv, env);
  return {
    rawDays: vars.RETENTION_RAW_DAYS ?? 180,
    eventsDays: vars.RETENTION_EVENTS_DAYS ?? 30,
    refusedDays: vars.RETENTION_REFUSED_DAYS ?? 30,
    batchSize: vars.RETENTION_BATCH_SIZE ?? 500,
    batchPauseMs: vars.RETENTION_BATCH_PAUSE_MS ?? 1000,
    intervalMs: vars.RETENTION_INTERVAL_MS ?? 600000,
  };
}

export const retentionConfig = registerAs('retention', () => loadRetentionConfig());
