import { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver.js';

/** One command a mysql2 connection sent: one request to the server and its answer, a round trip. */
export interface SentCommand {
  connectionId: number;
  /** The statement text as sent (values already in it), or the command's name (Ping, Quit, ...). */
  text: string;
}

interface DriverCommand {
  sql?: string;
  constructor: { name: string };
}

interface DriverConnection {
  threadId: number;
  addCommand(command: DriverCommand): unknown;
  [recorded]?: true;
}

const recorded = Symbol('recorded');

/**
 * Records every command the app's pooled mysql2 connections send, at the driver's single entry
 * point for them (Connection.addCommand: queries, prepares, pings, ...): what the server actually
 * received, whatever the layers above did.
 */
export class SentCommands {
  readonly sent: SentCommand[] = [];

  /** From now on: each connection is wrapped when the pool hands it out. */
  static attach(app: INestApplication): SentCommands {
    const commands = new SentCommands();
    const pool = (app.get(DataSource).driver as MysqlDriver).pool as {
      on(event: 'acquire', listener: (connection: DriverConnection) => void): void;
    };
    pool.on('acquire', (connection) => commands.record(connection));
    return commands;
  }

  /** As attach, for a module without HTTP (a medium suite's): the connections of `dataSource`'s pool. */
  static attachTo(dataSource: DataSource): SentCommands {
    const commands = new SentCommands();
    const pool = (dataSource.driver as MysqlDriver).pool as {
      on(event: 'acquire', listener: (connection: DriverConnection) => void): void;
    };
    pool.on('acquire', (connection) => commands.record(connection));
    return commands;
  }

  /**
   * The commands of the transaction, on one connection, that sent `marker` (a transaction id): from
   * the command that began it (START TRANSACTION and its first statement) to its COMMIT or ROLLBACK, both included.
   */
  transactionSending(marker: string): string[] {
    const at = this.sent.findIndex((c) => c.text.includes(marker));
    if (at < 0) throw new Error(`no command sent ${marker}`);
    const connection = this.sent.filter((c) => c.connectionId === this.sent[at].connectionId);
    const index = connection.indexOf(this.sent[at]);
    // START TRANSACTION goes out with the transaction's first statement (beginWithFirstStatement).
    const begin = connection.findLastIndex((c, i) => i <= index && c.text.startsWith('START TRANSACTION'));
    const end = connection.findIndex((c, i) => i >= index && (c.text === 'COMMIT' || c.text === 'ROLLBACK'));
    if (begin < 0 || end < 0) throw new Error(`${marker} was not sent inside a whole transaction`);
    return connection.slice(begin, end + 1).map((c) => c.text);
  }

  /** Every command, on any connection, that sent `marker`. */
  sending(marker: string): string[] {
    return this.sent.filter((c) => c.text.includes(marker)).map((c) => c.text);
  }

  private record(connection: DriverConnection): void {
    if (connection[recorded]) return;
    connection[recorded] = true;
    const addCommand = connection.addCommand.bind(connection);
    connection.addCommand = (command) => {
      this.sent.push({ connectionId: connection.threadId, text: command.sql ?? command.constructor.name });
      return addCommand(command);
    };
  }
}
