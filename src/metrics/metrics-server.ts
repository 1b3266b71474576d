import { createServer, Server } from 'node:http';
import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { HttpAdapterHost } from '@nestjs/core';
import { FastifyInstance } from 'fastify';
import { register } from 'prom-client';
import { serverConfig } from '../config/server.config';

const METRICS_PATH = '/metrics';

/**
 * With METRICS_PORT set, /metrics is served on a listener of its own (keep it inside the cluster)
 * and the public port answers 404 for it. It closes last, so metrics are scraped while draining.
 */
@Injectable()
export class MetricsServer implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server?: Server;

  constructor(
    @Inject(serverConfig.KEY) private readonly config: ConfigType<typeof serverConfig>,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** The port /metrics is served on, once listening; undefined: the API's port. */
  get port(): number | undefined {
    return (this.server?.address() as { port: number } | null)?.port;
  }

  onModuleInit(): void {
    if (this.config.metricsPort === undefined) return;
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onRequest', async (request, reply) => {
      if (request.url.split('?')[0] === METRICS_PATH)
        await reply
          .code(404)
          .send({ statusCode: 404, error: 'Not Found', message: 'metrics are served on METRICS_PORT' });
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.metricsPort === undefined) return;
    const server = createServer((request, response) => void this.answer(request.method, request.url, response));
    server.requestTimeout = 10000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.metricsPort, '0.0.0.0', () => resolve());
    });
    this.server = server;
    this.logger.log(`/metrics served on port ${this.port}`);
  }

  private async answer(
    method: string | undefined,
    url: string | undefined,
    response: import('node:http').ServerResponse,
  ): Promise<void> {
    if (method !== 'GET' || (url ?? '').split('?')[0] !== METRICS_PATH) {
      response.writeHead(404).end();
      return;
    }
    try {
      const body = await register.metrics();
      response.writeHead(200, { 'content-type': register.contentType }).end(body);
    } catch (error) {
      this.logger.error(`collecting metrics failed: ${(error as Error).message}`);
      response.writeHead(500).end();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
