import { runCli } from '../../tools/simulator/simulate';

/** What `npm run simulate` prints and answers, without a process: runCli's exit code and its stdout/stderr. */
async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    return { code: await runCli(argv), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe(runCli.name, () => {
  const sut = run;

  it.each([['--help'], ['-h'], ['help']])('should print every command and exit 0 for %s', async (word) => {
    const result = await sut([word]);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('usage: npm run simulate -- <command> [options]');
    for (const command of ['init', 'platform', 'order', 'pay', 'refund-notice', 'storm', 'tokens']) {
      expect(result.stdout).toContain(`\n  ${command} `);
    }
  });

  it.each([
    [['help', 'pay'], 'usage: npm run simulate -- pay <orderNo>'],
    [['pay', '--help'], 'usage: pay <orderNo>'],
    [['pay', 'T-1', '--channel', 'alipay', '-h'], 'usage: pay <orderNo>'],
    [['pay', 'help'], 'usage: pay <orderNo>'],
    [['refund-notice', '-h'], 'usage: refund-notice <refundNo>'],
    [['init', '--help'], 'usage: init [--keys .simulator] [--env-local .env.local] [--port 3000]'],
    [['tokens', '--help'], 'usage: tokens [--shell]'],
    [['platform', '--help'], "default: the key set's, set by init --platform-port"],
  ])('should print the command usage and exit 0 for %j, doing nothing else', async (argv, usage) => {
    const result = await sut(argv);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain(usage);
  });

  it('should still exit 2 with the usage on stderr for an unknown command', async () => {
    const result = await sut(['pay-twice']);

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command "pay-twice"');
  });
});
