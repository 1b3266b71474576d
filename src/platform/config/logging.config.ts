import { IsOptional } from 'class-validator';
import { OneOf, validateEnv } from './env-validation';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

class LoggingEnv {
  @IsOptional()
  @OneOf(LOG_LEVELS)
  LOG_LEVEL?: LogLevel;
}

export function loadLogLevel(env: NodeJS.ProcessEnv = process.env): LogLevel {
  return validateEnv(LoggingEnv, env).LOG_LEVEL ?? 'info';
}
