import { registerAs } from '@nestjs/config';
import { IsOptional, IsString, MinLength } from 'class-validator';
import { IntegerBetween, OneOf, validateEnv } from '../../domain/env-validation';

class ServerEnv {
  @IsOptional()
  @IntegerBetween(0, 65535)
  PORT?: number;

  @IsOptional()
  @IntegerBetween(0, 65535)
  METRICS_PORT?: number;

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'INTERNAL_API_TOKEN must be at least 16 characters' })
  INTERNAL_API_TOKEN?: string;

  @IsOptional()
  @IntegerBetween(1000, 600000)
  HTTP_REQUEST_TIMEOUT_MS?: number;

  @IsOptional()
  @IntegerBetween(1000, 600000)
  HTTP_HEADERS_TIMEOUT_MS?: number;

  @IsOptional()
  @IntegerBetween(1000, 600000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS?: number;

  @IsOptional()
  @IntegerBetween(1, 100000)
  HTTP_MAX_CONNECTIONS?: number;

  @IsOptional()
  @IntegerBetween(100, 60000)
  HEALTH_CHECK_TIMEOUT_MS?: number;

  @IsOptional()
  @IntegerBetween(0, 120000)
  SHUTDOWN_DRAIN_MS?: number;

  @IsOptional()
  @IntegerBetween(0, 120000)
  SHUTDOWN_GRACE_MS?: number;

  @IsOptional()
  @OneOf(['true', 'false'])
  EXAMPLE_HANDLERS?: string;
}

export interface HttpLimits {
  /** The whole request, body included, must arrive within this (a slow-body client is cut off). */
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Connections beyond this are refused at once. */
  maxConnections: number;
}

export interface ServerConfig {
  port: number;
  /** Where /metrics is served; undefined: on `port`, beside the API. */
  metricsPort?: number;
  /** Undefined: the internal order API answers 503 until a token is configured. */
  internalApiToken?: string;
  http: HttpLimits;
  healthCheckTimeoutMs: number;
  /** After SIGTERM: readiness fails at once, requests are still served this long (load balancers take time to notice). */
  shutdownDrainMs: number;
  /** Then the listener closes and requests in flight get this long to finish before their connections are cut. */
  shutdownGraceMs: number;
  exampleHandlers: boolean;
}

export function loadServerConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const vars = validateEnv(ServerEnv, env);
  const port = vars.PORT ?? 3000;
  return {
    port,
    // Port 0 (a free one, in tests) is never the same port as another 0.
    metricsPort: vars.METRICS_PORT === port && port !== 0 ? undefined : vars.METRICS_PORT,
    internalApiToken: vars.INTERNAL_API_TOKEN,
    http: {
      requestTimeoutMs: vars.HTTP_REQUEST_TIMEOUT_MS ?? 10000,
      headersTimeoutMs: vars.HTTP_HEADERS_TIMEOUT_MS ?? 5000,
      keepAliveTimeoutMs: vars.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? 65000,
      maxConnections: vars.HTTP_MAX_CONNECTIONS ?? 2000,
    },
    healthCheckTimeoutMs: vars.HEALTH_CHECK_TIMEOUT_MS ?? 1000,
    shutdownDrainMs: vars.SHUTDOWN_DRAIN_MS ?? 5000,
    shutdownGraceMs: vars.SHUTDOWN_GRACE_MS ?? 20000,
    exampleHandlers: vars.EXAMPLE_HANDLERS === 'true',
  };
}

export const serverConfig = registerAs('server', () => loadServerConfig());
