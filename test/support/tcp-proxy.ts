import { createConnection, createServer, Server, Socket } from 'node:net';

/**
 * A real TCP hop between the app and the broker or the database, so that a test can take the
 * peer away (every connection cut, new ones refused) and bring it back on the same address, or
 * stall it: connections stay open and new ones are accepted, but no byte passes either way until
 * resume(), as in a network partition. In front of MySQL or MariaDB it can also lose the server's
 * answers (dropAnswers, then cut) and show what the app sent (commandsSent).
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  private droppingAnswers = false;
  private held: Array<{ to: Socket; chunk: Buffer }> = [];
  private readonly commands: SentCommand[] = [];
  private connections = 0;
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
      this.forward(client, upstream, 'request');
      this.forward(upstream, client, 'answer');
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      const connection = ++this.connections;
      const readCommands = mysqlCommandReader((text) => this.commands.push({ connection, text }));
      client.on('data', readCommands);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** The peer is gone: open connections are cut and new ones refused, until start() again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.cut();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Every open connection is cut, as a lost network path would; new ones are accepted as before. */
  cut(): void {
    for (const socket of this.sockets) socket.destroy();
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

  /**
   * Requests still reach the server, which runs them, but its answers are thrown away: the app
   * waits for answers that never come. Until cut() (then passAnswers()), as when a network path
   * dies after the server received a request.
   */
  dropAnswers(): void {
    this.droppingAnswers = true;
  }

  passAnswers(): void {
    this.droppingAnswers = false;
  }

  /**
   * Every COM_QUERY and COM_STMT_PREPARE the app's connections sent through this proxy since the
   * last call (MySQL's client/server protocol, uncompressed, without TLS), in the order the proxy
   * read them, each with the connection it came on.
   */
  commandsSent(): SentCommand[] {
    return this.commands.splice(0);
  }

  private forward(from: Socket, to: Socket, direction: 'request' | 'answer'): void {
    from.on('data', (chunk: Buffer) => {
      if (direction === 'answer' && this.droppingAnswers) return;
      if (this.stalled) this.held.push({ to, chunk });
      else if (!to.destroyed) to.write(chunk);
    });
  }
}

/** A statement's text as it went out, and which of the proxy's connections (numbered from 1) carried it. */
export interface SentCommand {
  connection: number;
  text: string;
}

const COM_QUERY = 0x03;
const COM_STMT_PREPARE = 0x16;

/**
 * Splits a client's byte stream into MySQL packets (3-byte length, 1-byte sequence id, payload)
 * and reports the SQL text of each command packet (sequence id 0) that carries one. The handshake
 * response has sequence id 1, so it is never taken for a command.
 */
function mysqlCommandReader(onText: (text: string) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const length = pending.readUIntLE(0, 3);
      if (pending.length < 4 + length) return;
      const sequenceId = pending[3];
      const payload = pending.subarray(4, 4 + length);
      pending = pending.subarray(4 + length);
      if (sequenceId === 0 && (payload[0] === COM_QUERY || payload[0] === COM_STMT_PREPARE)) {
        onText(payload.subarray(1).toString('utf8'));
      }
    }
  };
}
