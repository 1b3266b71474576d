import { registerAs } from '@nestjs/config';
import { IsOptional, Matches } from 'class-validator';
import { ConfigurationError, IntegerBetween, OneOf, validateEnv } from '../../platform/config/env-validation';

class WebhooksEnv {
  @IsOptional()
  @IntegerBetween(100, 120000)
  WEBHOOK_TIMEOUT_MS?: number;

  @IsOptional()
  @Matches(/^\d{1,7}(,\d{1,7}){0,19}$/, {
    message: 'WEBHOOK_RETRY_SCHEDULE_SECONDS must be 1 to 20 comma-separated whole seconds, e.g. 0,5,300',
  })
  WEBHOOK_RETRY_SCHEDULE_SECONDS?: string;

  @IsOptional()
  @OneOf(['true', 'false'])
  WEBHOOK_ALLOW_PRIVATE_URLS?: string;

  @IsOptional()
  @IntegerBetween(1, 100)
  WEBHOOK_ENDPOINT_CONCURRENCY?: number;

  @IsOptional()
  @IntegerBetween(10, 60000)
  WEBHOOK_POLL_INTERVAL_MS?: number;

  @IsOptional()
  @IntegerBetween(1, 31536000)
  WEBHOOK_DISABLE_AFTER_SECONDS?: number;
}

export interface WebhooksConfig {
  timeoutMs: number;
  /** Delay before each attempt, in ms: the first is the delay of the first attempt; their count is the attempts. */
  retryScheduleMs: number[];
  /** Lifts the address rule and allows http:// (internal networks, tests). */
  allowPrivateUrls: boolean;
  /** Attempts in flight at once per endpoint, per replica. */
  endpointConcurrency: number;
  pollIntervalMs: number;
  /** An endpoint whose attempts have all failed for this long is disabled (default 5 days). */
  disableAfterMs: number;
  /** How long a rotated-out secret keeps signing alongside the new one. */
  secretOverlapMs: number;
  /** The answer's bytes read, at most; the first 1 KB of them is kept. */
  maxResponseBytes: number;
}

export const DEFAULT_RETRY_SCHEDULE_SECONDS = [0, 5, 300, 1800, 7200, 18000, 36000, 36000];

export function loadWebhooksConfig(env: NodeJS.ProcessEnv = process.env): WebhooksConfig {
  const vars = validateEnv(WebhooksEnv, env);
  const schedule = vars.WEBHOOK_RETRY_SCHEDULE_SECONDS?.split(',').map(Number) ?? DEFAULT_RETRY_SCHEDULE_SECONDS;
  const timeoutMs = vars.WEBHOOK_TIMEOUT_MS ?? 15000;
  if (schedule.length === 0)
    throw new ConfigurationError('WEBHOOK_RETRY_SCHEDULE_SECONDS must list at least one delay');
  return {
    timeoutMs,
    retryScheduleMs: schedule.map((s) => s * 1000),
    allowPrivateUrls: vars.WEBHOOK_ALLOW_PRIVATE_URLS === 'true',
    endpointConcurrency: vars.WEBHOOK_ENDPOINT_CONCURRENCY ?? 8,
    pollIntervalMs: vars.WEBHOOK_POLL_INTERVAL_MS ?? 1000,
    disableAfterMs: (vars.WEBHOOK_DISABLE_AFTER_SECONDS ?? 5 * 86400) * 1000,
    secretOverlapMs: 24 * 3600 * 1000,
    maxResponseBytes: 64 * 1024,
  };
}

export const webhooksConfig = registerAs('webhooks', () => loadWebhooksConfig());
