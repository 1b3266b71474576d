/**
 * `npm run simulate -- <command>`: the payment channels as a person plays them against a local service, with a
 * local key set. One file per command; they share cli.ts (options, bounded HTTP, output) and notifications.ts, and
 * ask each channel (channels.ts, one folder each) for what is its own.
 */
import { asksForHelp, COMMON_USAGE, isHelpWord, print, UnreachableError, UsageError } from './cli';
import { init, INIT_USAGE } from './init.command';
import { order, ORDER_USAGE } from './order.command';
import { pay, PAY_USAGE } from './pay.command';
import { platform, PLATFORM_USAGE } from './platform.command';
import { refundNotice, REFUND_NOTICE_USAGE } from './refund-notice.command';
import { storm, STORM_USAGE } from './storm.command';
import { tokens, TOKENS_USAGE } from './tokens.command';

const COMMANDS: Record<string, [run: (args: string[]) => number | Promise<number>, usage: string]> = {
  init: [init, INIT_USAGE],
  platform: [platform, PLATFORM_USAGE],
  order: [order, ORDER_USAGE],
  pay: [pay, PAY_USAGE],
  'refund-notice': [refundNotice, REFUND_NOTICE_USAGE],
  storm: [storm, STORM_USAGE],
  tokens: [tokens, TOKENS_USAGE],
};

function usage(): string {
  return [
    'usage: npm run simulate -- <command> [options]',
    ...Object.values(COMMANDS).map(([, text]) => `  ${text}`),
    COMMON_USAGE,
    'npm run simulate -- <command> --help prints the usage of one command',
  ].join('\n');
}

/**
 * Runs a command and answers its exit code: 0 done (or the usage asked for with help, --help or -h), 1 refused or
 * unreachable, 2 called wrongly.
 */
export async function runCli(argv: string[], commands = COMMANDS, describe = usage): Promise<number> {
  const [name, ...args] = argv;
  if (isHelpWord(name)) {
    const asked = commands[args[0]];
    print(asked ? `usage: npm run simulate -- ${asked[1]}\n${COMMON_USAGE}` : describe());
    return 0;
  }
  const command = commands[name];
  if (command && asksForHelp(args)) {
    print(`usage: ${command[1]}\n${COMMON_USAGE}`);
    return 0;
  }
  if (!command) {
    process.stderr.write(`${name ? `unknown command "${name}"\n` : ''}${describe()}\n`);
    return 2;
  }
  try {
    return await command[0](args);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\nusage: ${command[1]}\n`);
      return 2;
    }
    if (error instanceof UnreachableError) {
      print(error.message);
      return 1;
    }
    throw error;
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: Error) => {
      process.stderr.write(`${error.stack}\n`);
      process.exitCode = 1;
    },
  );
}
