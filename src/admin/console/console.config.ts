import { IsIn, IsOptional } from 'class-validator';
import { validateEnv } from '../../platform/config/env-validation';

class ConsoleEnv {
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'CONSOLE must be true or false' })
  CONSOLE?: string;
}

export interface ConsoleConfig {
  /** Serve the operator console at /console (same origin as the admin API). */
  enabled: boolean;
}

export function loadConsoleConfig(env: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  return { enabled: validateEnv(ConsoleEnv, env).CONSOLE !== 'false' };
}
