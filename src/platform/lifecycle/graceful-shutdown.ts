import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyRequest } from 'fastify';
import { PollingWorker } from './polling-worker';
import { ServerConfig } from '../config/server.config';
import { ShutdownState } from './shutdown-state';

/** Time left after the drain and the grace for the workers, the broker and the pool, before exiting regardless. */
const FINAL_STEPS_MS = 3000;

/**
 * SIGTERM as Kubernetes sends it: readiness fails at once while requests are still served for
 * SHUTDOWN_DRAIN_MS (load balancers take that long to notice); then the listener closes, idle
 * keep-alive connections are closed and every later response closes its own; requests in flight
 * get SHUTDOWN_GRACE_MS, after which their connections are cut. Background workers stop after
 * their current round. Each step is logged; the process exits 0.
 */
export class GracefulShutdown {
  private readonly logger = new Logger('Shutdown');
  private listenerClosed = false;
  private readonly inFlight = new Set<FastifyRequest>();
  private servedWhileDraining = 0;
  private started?: number;

  constructor(
    private readonly app: NestFastifyApplication,
    private readonly config: Pick<ServerConfig, 'shutdownDrainMs' | 'shutdownGraceMs'>,
  ) {}

  /** Before listen: counts requests, and makes every response close its connection once the listener is closed. */
  install(): void {
    const fastify = this.app.getHttpAdapter().getInstance();
    fastify.addHook('onRequest', (request, _reply, done) => {
      this.inFlight.add(request);
      done();
    });
    fastify.addHook('onSend', (_request, reply, payload, done) => {
      if (this.listenerClosed) reply.header('connection', 'close');
      done(null, payload);
    });
    fastify.addHook('onResponse', (request, _reply, done) => {
      this.settled(request);
      done();
    });
    fastify.addHook('onRequestAbort', (request, done) => {
      this.settled(request);
      done();
    });
    // `on`, not `once`: a second signal during the drain must not kill the process with Node's default action.
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void this.run(signal));
  }

  private settled(request: FastifyRequest): void {
    if (this.inFlight.delete(request) && this.started !== undefined) this.servedWhileDraining++;
  }

  async run(signal: string): Promise<void> {
    if (this.started !== undefined) return;
    this.started = Date.now();
    const { shutdownDrainMs, shutdownGraceMs } = this.config;
    // Our own steps are bounded too; should one hang regardless, this still ends the process.
    setTimeout(
      () => this.exit(1, 'shutdown did not complete in time; exiting'),
      shutdownDrainMs + shutdownGraceMs + FINAL_STEPS_MS,
    ).unref();

    this.app.get(ShutdownState).startDraining();
    const workers = this.stopWorkers();
    this.logger.log(
      `${signal}: readiness answers 503 from now; serving requests for ${shutdownDrainMs} ms more while load balancers notice`,
    );
    await sleep(shutdownDrainMs);

    const server = this.app.getHttpServer();
    this.listenerClosed = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const inFlightAtClose = this.inFlight.size;
    this.logger.log(
      `listener closed after serving ${this.servedWhileDraining} requests while draining; idle connections closed; ` +
        `${inFlightAtClose} requests in flight get up to ${shutdownGraceMs} ms`,
    );
    const finished = await Promise.race([closed.then(() => true), sleep(shutdownGraceMs).then(() => false)]);
    const cutShort = finished ? 0 : this.inFlight.size;
    if (finished) {
      this.logger.log(`all ${inFlightAtClose} requests in flight finished; every connection closed`);
    } else {
      const open = await new Promise<number>((resolve) => server.getConnections((_e, count) => resolve(count)));
      server.closeAllConnections();
      this.logger.warn(
        `grace of ${shutdownGraceMs} ms over: cut ${open} connections (${cutShort} requests unfinished)`,
      );
    }

    const stoppedWorkers = await workers;
    this.logger.log(`background workers stopped: ${stoppedWorkers.join(', ') || 'none running'}`);
    await this.app.close();
    this.exit(
      0,
      `stopped in ${Date.now() - this.started} ms: ${this.servedWhileDraining} requests served after ${signal}, ` +
        `${cutShort} cut short; workers, broker connection and database pool closed`,
    );
  }

  /** Every PollingWorker (outbox relay, retry workers) finishes its current round and starts no other. */
  private async stopWorkers(): Promise<string[]> {
    const workers = this.app
      .get(DiscoveryService)
      .getProviders()
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is PollingWorker => instance instanceof PollingWorker);
    const wasRunning = await Promise.all(workers.map((worker) => worker.stop()));
    return workers.filter((_, i) => wasRunning[i]).map((worker) => worker.constructor.name);
  }

  private exit(code: number, message: string): void {
    process.exitCode = code;
    if (code === 0) this.logger.log(message);
    else this.logger.error(message);
    // The log destination writes asynchronously; give it a moment to flush the last lines.
    setTimeout(() => process.exit(code), 100).unref();
  }
}
