import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module';
import { asksForHelp } from '../platform/lifecycle/command-line';
import { isBillDate } from '../domain/bill';
import { describeCounts, ReconciliationService } from './reconciliation.service';
import { REGISTERED_CHANNELS } from '../channels/registered-channels';

const USAGE = `usage: npm run reconcile -- --date YYYY-MM-DD [--channel ${REGISTERED_CHANNELS.join('|')}] [--account <mchid or app id>]`;

/**
 * `npm run reconcile -- --date 2026-11-30`: reconciles the day now, for every account with API
 * credentials (or the one named), printing a line per phase. Exit code 0 when every run
 * completed, 1 otherwise (not ready, failed, or running elsewhere).
 */
async function main(args: string[]): Promise<void> {
  if (asksForHelp(args)) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const { values } = parseArgs({
    args,
    options: { date: { type: 'string' }, channel: { type: 'string' }, account: { type: 'string' } },
  });
  if (!values.date || !isBillDate(values.date)) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  // This process runs the one day asked for: no schedule of its own.
  process.env.RECONCILE_AT = 'off';
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
  try {
    const reconciliation = app.get(ReconciliationService);
    const targets = reconciliation.targets(values.channel?.toUpperCase(), values.account);
    if (targets.length === 0) throw new Error('no account with API credentials matches');
    let allCompleted = true;
    for (const { channel, merchantId, subMerchantId } of targets) {
      const label = `${channel.channel} ${merchantId}${subMerchantId ? `/${subMerchantId}` : ''} ${values.date}`;
      const started = Date.now();
      const print = (message: string) =>
        process.stdout.write(`${label} [${((Date.now() - started) / 1000).toFixed(1)} s]: ${message}\n`);
      const report = await reconciliation.run(channel.channel, merchantId, values.date, 'MANUAL', print, subMerchantId);
      if (!report) print('already running on another instance');
      else if (report.counts) print(`COMPLETED ${describeCounts(report.counts)}`);
      else print(`${report.status}: ${report.detail ?? ''}`);
      allCompleted &&= report?.status === 'COMPLETED';
    }
    process.exitCode = allCompleted ? 0 : 1;
  } finally {
    await app.close();
  }
}

main(process.argv.slice(2)).catch((error: Error) => {
  process.stderr.write(`reconcile: ${error.message}\n`);
  process.exit(1);
});
