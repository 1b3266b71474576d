import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { asksForHelp } from '../platform/lifecycle/command-line';
import { loadDatabaseConfig } from '../platform/config/database.config';
import { serverDataSourceOptions } from '../platform/database/data-source-options';
import { listDeadLetters } from './dead-letters.queries';
import { replayDeadLetters } from './dead-letters.repository';

const USAGE = `usage: npm run dead-letters -- list
       npm run dead-letters -- replay <eventId>... | --all`;

/** `npm run dead-letters -- list|replay`: the operator's view of events that could not be delivered. */
async function main(args: string[]): Promise<void> {
  if (asksForHelp(args)) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const [command, ...rest] = args;
  if (command !== 'list' && !(command === 'replay' && rest.length > 0)) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const dataSource = await new DataSource(await serverDataSourceOptions(loadDatabaseConfig())).initialize();
  try {
    if (command === 'list') {
      const letters = await listDeadLetters(dataSource);
      for (const l of letters) {
        process.stdout.write(
          `${l.deadLetteredAt.toISOString()}  ${l.stage.padEnd(16)} ${l.eventId} ${l.type} order=${l.orderNo} attempts=${l.attempts} ${l.lastError ?? ''}\n`,
        );
      }
      process.stdout.write(`${letters.length} dead-lettered\n`);
    } else {
      const replayed = await replayDeadLetters(dataSource, rest[0] === '--all' ? [] : rest);
      process.stdout.write(`${replayed} put back in line\n`);
    }
  } finally {
    await dataSource.destroy();
  }
}

main(process.argv.slice(2)).catch((error: Error) => {
  process.stderr.write(`dead-letters: ${error.message}\n`);
  process.exit(1);
});
