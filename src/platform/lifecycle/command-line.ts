/** `help`, `--help` or `-h` anywhere among the arguments: the usage on stdout and exit 0, as every CLI does. */
export function asksForHelp(args: readonly string[]): boolean {
  return args.some((arg) => arg === '--help' || arg === '-h' || arg === 'help');
}
