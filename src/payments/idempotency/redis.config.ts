import { registerAs } from '@nestjs/config';
import { IsOptional, Matches } from 'class-validator';
import { IntegerBetween, validateEnv } from '../../platform/config/env-validation';

class RedisEnv {
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must look like redis://[:password@]host:6379[/db]' })
  REDIS_URL?: string;

  @IsOptional()
  @Matches(/^[A-Za-z0-9_.:\-]{1,64}$/, { message: 'REDIS_KEY_PREFIX must be 1 to 64 letters, digits, _ . : -' })
  REDIS_KEY_PREFIX?: string;

  @IsOptional()
  @IntegerBetween(60, 30 * 86400)
  REDIS_PAID_TTL_SECONDS?: number;

  @IsOptional()
  @IntegerBetween(100, 60000)
  REDIS_IN_FLIGHT_MS?: number;

  @IsOptional()
  @IntegerBetween(5, 5000)
  REDIS_COMMAND_TIMEOUT_MS?: number;
}

export interface RedisConfig {
  /** Undefined: no Redis; only each replica's memory answers repeats ahead of the database. */
  url?: string;
  /** Namespaces the keys; one per database, so that two deployments sharing a Redis never see each other's payments. */
  keyPrefix: string;
  /** How long a committed payment's key stays: longer than the platforms' retry horizons (the longest is about 25 h). */
  paidTtlSeconds: number;
  /** The life of a first delivery's in-flight marker, and so the longest a repeat on another replica waits for it. */
  inFlightMs: number;
  /** A Redis command without an answer by then has failed: the request goes on to the database. */
  commandTimeoutMs: number;
}

export function loadRedisConfig(env: NodeJS.ProcessEnv = process.env): RedisConfig {
  const vars = validateEnv(RedisEnv, env);
  return {
    url: vars.REDIS_URL,
    keyPrefix: vars.REDIS_KEY_PREFIX ?? 'pcs:',
    paidTtlSeconds: vars.REDIS_PAID_TTL_SECONDS ?? 48 * 3600,
    inFlightMs: vars.REDIS_IN_FLIGHT_MS ?? 5000,
    commandTimeoutMs: vars.REDIS_COMMAND_TIMEOUT_MS ?? 100,
  };
}

export const redisConfig = registerAs('redis', () => loadRedisConfig());
