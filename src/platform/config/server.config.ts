import { registerAs } from '@nestjs/config';
import { IsOptional, IsString, MinLength } from 'class-validator';
import { ConfigurationError, IntegerBetween, OneOf, validateEnv } from './env-validation';

/** The management port unless METRICS_PORT names another: /metrics and the detailed readiness, never public. */
export const DEFAULT_METRICS_PORT = 9464;

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
  /** The management port: /metrics and the detailed probes (0: any free port, in tests). */
  metricsPort: number;
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
  const metricsPort = vars.METRICS_PORT ?? DEFAULT_METRICS_PORT;
  // Port 0 (a free one, in tests) is never the same port as another 0.
  if (metricsPort === port && port !== 0) {
    throw new ConfigurationError(
      'Invalid configuration: METRICS_PORT must differ from PORT: /metrics and the detailed readiness are never served on the public port',
    );
  }
  return {
    port,
    metricsPort,
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

/**
 * A listener's error, naming the setting of its port when the port is taken (`listen EADDRINUSE`
 * alone does not say which of PORT and METRICS_PORT to change).
 */
export function listenError(error: Error, setting: 'PORT' | 'METRICS_PORT'): Error {
  if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') return error;
  return new Error(
    `${error.message}: the port ${setting} names is taken by another process; stop it, or set ${setting} to a free port`,
  );
}
