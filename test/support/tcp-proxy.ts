import { createConnection, createServer, Server, Socket } from 'node:net';

/**
 * A real TCP hop between the app and the broker or the database, so that a test can take the
 * peer away (every connection cut, new ones refused) and bring it back on the same address, or
 * stall it: connections stay open and new ones are accepted, but no byte passes either way until
 * resume(), as in a network partition.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  private held: Array<{ to: Socket; chunk: Buffer }> = [];
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = createConnection(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      this.forward(client, upstream);
      this.forward(upstream, client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** The peer is gone: open connections are cut and new ones refused, until start() again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** A partition: nothing passes, nothing is refused or cut; bytes sent meanwhile wait for resume(). */
  stall(): void {
    this.stalled = true;
  }

  /** The partition heals: what was held is delivered, in order, to the sockets still open. */
  resume(): void {
    this.stalled = false;
    const held = this.held;
    this.held = [];
    for (const { to, chunk } of held) if (!to.destroyed) to.write(chunk);
  }

  private forward(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (this.stalled) this.held.push({ to, chunk });
      else if (!to.destroyed) to.write(chunk);
    });
  }
}
