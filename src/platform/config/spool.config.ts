import { isAbsolute } from 'node:path';
import { registerAs } from '@nestjs/config';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { ConfigurationError, validateEnv } from './env-validation';

class SpoolEnv {
  @IsOptional()
  @IsString()
  SPOOL_DIR?: string;

  @IsOptional()
  @IsInt()
  @Min(64 * 1024)
  @Max(Number.MAX_SAFE_INTEGER)
  SPOOL_MAX_BYTES?: number;
}

export interface SpoolConfig {
  /** Undefined: no spool; a notification the database cannot take is answered with a retryable failure. */
  dir?: string;
  /** Segment and parked files together never grow past this; a full spool answers the retryable failure. */
  maxBytes: number;
}

export const DEFAULT_SPOOL_MAX_BYTES = 256 * 1024 * 1024;

export function loadSpoolConfig(env: NodeJS.ProcessEnv = process.env): SpoolConfig {
  const vars = validateEnv(SpoolEnv, env);
  if (vars.SPOOL_DIR !== undefined && !isAbsolute(vars.SPOOL_DIR)) {
    throw new ConfigurationError('Invalid configuration:\n  - SPOOL_DIR: must be an absolute path');
  }
  return { dir: vars.SPOOL_DIR, maxBytes: vars.SPOOL_MAX_BYTES ?? DEFAULT_SPOOL_MAX_BYTES };
}

export const spoolConfig = registerAs('spool', () => loadSpoolConfig());
