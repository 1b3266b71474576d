import { createServer, Server, ServerResponse } from 'node:http';
import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import { FastifyInstance } from 'fastify';
import { register } from 'prom-client';
import { listenError, serverConfig } from '../config/server.config';
import { ManagementReadiness, MANAGEMENT_READINESS } from './management-readiness';

const METRICS_PATH = '/metrics';
const LIVE_PATH = '/health/live';
const READY_PATH = '/health/ready';
/** Prometheus and the kubelet need a handful; a flood from inside the cluster is refused past this. */
const MAX_CONNECTIONS = 64;

/**
 * The management port (METRICS_PORT, 9464 by default): /metrics and the probes on a listener of
 * their own, kept inside the cluster, so that a flood of slow connections on the public port (up
 * to HTTP_MAX_CONNECTIONS) cannot fail liveness and get the pod restarted, and so that an outsider
 * reads neither the metrics nor the readiness report (spool, outbox, database). The public port
 * answers 404 for /metrics and only the status for /health/ready. It closes last, so metrics are
 * scraped and probes answered while draining. Beside an HTTP app only (not in a bare module).
 */
@Injectable()
export class MetricsServer implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server?: Server;

  constructor(
    @Inject(serverConfig.KEY) private readonly config: ConfigType<typeof serverConfig>,
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** The port /metrics is served on, once listening. */
  get port(): number | undefined {
    return (this.server?.address() as { port: number } | null)?.port;
  }

  onModuleInit(): void {
    if (!this.adapterHost.httpAdapter) return;
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onRequest', async (request, reply) => {
      if (request.url.split('?')[0] === METRICS_PATH)
        await reply
          .code(404)
          .send({ statusCode: 404, error: 'Not Found', message: 'metrics are served on METRICS_PORT' });
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.adapterHost.httpAdapter) return;
    const server = createServer((request, response) => void this.answer(request.method, request.url, response));
    server.requestTimeout = 10000;
    server.headersTimeout = 5000;
    server.maxConnections = MAX_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => reject(listenError(error, 'METRICS_PORT')));
      server.listen(this.config.metricsPort, '0.0.0.0', () => resolve());
    });
    this.server = server;
    this.logger.log(`/metrics and /health (the readiness report) served on port ${this.port}`);
  }

  private async answer(method: string | undefined, url: string | undefined, response: ServerResponse): Promise<void> {
    const path = (url ?? '').split('?')[0];
    if (method === 'GET' && path === METRICS_PATH) return this.answerMetrics(response);
    if (method === 'GET' && path === READY_PATH) return this.answerReadiness(response);
    if (method === 'GET' && path === LIVE_PATH) return this.answerProbe(path, response);
    response.writeHead(404).end();
  }

  /** 200 or 503, as the public port's, with the report: what decides readiness and what is reported beside it. */
  private async answerReadiness(response: ServerResponse): Promise<void> {
    try {
      const { ready, report } = await this.moduleRef
        .get<ManagementReadiness>(MANAGEMENT_READINESS, { strict: false })
        .report();
      response
        .writeHead(ready ? 200 : 503, { 'content-type': 'application/json; charset=utf-8' })
        .end(JSON.stringify(report));
    } catch (error) {
      // The app is closing or broken: either way, not ready.
      this.logger.error(`${READY_PATH} failed: ${(error as Error).message}`);
      response.writeHead(503).end();
    }
  }

  /** In-process, through the app's routes (no socket): the same answer the public port would give. */
  private async answerProbe(path: string, response: ServerResponse): Promise<void> {
    try {
      const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
      const probe = await fastify.inject({ method: 'GET', url: path });
      response.writeHead(probe.statusCode, { 'content-type': 'application/json; charset=utf-8' }).end(probe.body);
    } catch (error) {
      // The app is closing or broken: either way, not ready.
      this.logger.error(`${path} failed: ${(error as Error).message}`);
      response.writeHead(503).end();
    }
  }

  private async answerMetrics(response: ServerResponse): Promise<void> {
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
