import { registerAs } from '@nestjs/config';
import { IsOptional } from 'class-validator';
import { IntegerBetween, validateEnv } from '../../platform/config/env-validation';

class RefusedNotificationsEnv {
  @IsOptional()
  @IntegerBetween(0, 1_000_000)
  REFUSED_NOTIFICATIONS_PER_HOUR?: number;
}

export interface RefusedNotificationsConfig {
  /**
   * New refused notifications kept per channel, UTC hour and kind (unknown orders, which only the
   * platform can sign, apart from the rest), across all replicas; past it they are dropped and
   * counted. 0 keeps none. Repeats of kept bytes only add to their count.
   */
  perHour: number;
}

export function loadRefusedNotificationsConfig(env: NodeJS.ProcessEnv = process.env): RefusedNotificationsConfig {
  const vars = validateEnv(RefusedNotificationsEnv, env);
  return { perHour: vars.REFUSED_NOTIFICATIONS_PER_HOUR ?? 1000 };
}

export const refusedNotificationsConfig = registerAs('refusedNotifications', () => loadRefusedNotificationsConfig());
