import { registerAs } from '@nestjs/config';
import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { validateEnv } from './validate-env';

class ServerEnv {
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT?: number;

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'INTERNAL_API_TOKEN must be at least 16 characters' })
  INTERNAL_API_TOKEN?: string;
}

export interface ServerConfig {
  port: number;
  /** Undefined: the internal order API answers 503 until a token is configured. */
  internalApiToken?: string;
}

export function loadServerConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const vars = validateEnv(ServerEnv, env);
  return { port: vars.PORT ?? 3000, internalApiToken: vars.INTERNAL_API_TOKEN };
}

export const serverConfig = registerAs('server', () => loadServerConfig());
