import { useMemo } from 'react';
import { Card, Statistic, Tag } from 'antd';
import { PALETTE, TimeChart } from '../chart';
import { codeLabel } from '../catalogue';
import { formatDay, formatMs } from '../format';
import { lang, locale, t } from '../i18n';
import { Code, DataTable, Show, Status, Time, useGet } from '../ui';
import { useVocabulary } from '../vocabulary';

interface CountByKey {
  key: string;
  count: number;
}

interface Reconciled {
  channel: string;
  merchantId: string;
  date: string;
  status: string;
  counts: Record<string, number> | null;
  finishedAt: string | null;
}

interface ExpiringCredential {
  channel: string;
  /** '' for a channel-wide chain (UnionPay's root and middle certificates). */
  account: string;
  kind: string;
  validTo: string;
}

interface Overview {
  at: string;
  latency: { deliveries: number; p50Ms: number | null; p99Ms: number | null };
  openAnomalies: CountByKey[];
  refundsAwaitingApproval: number;
  unsettledRefunds: CountByKey[];
  deadLetters: number;
  spool: { enabled: boolean; pending?: number; parked?: number; quarantined?: number; oldestAgeSeconds?: number };
  reconciliations: Reconciled[];
  /** The certificates the channels hold that expire first, soonest first. */
  expiringCredentials: ExpiringCredential[];
}

const DAY_MS = 86_400_000;
/** What the alert CredentialExpiresSoon fires at: a certificate with fewer days left is highlighted. */
const SOON_DAYS = 30;

interface Stats {
  from: string;
  to: string;
  rows: StatsRow[];
}

interface StatsRow {
  bucket: string;
  channel: string;
  deliveries: number;
  paymentDeliveries: number;
  duplicateDeliveries: number;
  outcomes: Record<string, number>;
}

const HOUR_MS = 3600_000;

/** Per UTC hour of [from, to), per channel and per outcome; hours without deliveries included as 0. Series are labelled in the console's language. */
export function hourly(stats: Stats, channels: string[]) {
  const first = Math.floor(Date.parse(stats.from) / HOUR_MS) * HOUR_MS;
  const hours: number[] = [];
  for (let hour = first; hour < Date.parse(stats.to); hour += HOUR_MS) hours.push(hour);
  const index = new Map(hours.map((hour, i) => [hour, i]));
  const outcomes = [...new Set(stats.rows.flatMap((r) => Object.keys(r.outcomes)))].sort();
  const zeros = () => hours.map(() => 0);
  const deliveries = new Map(channels.map((c) => [c, zeros()]));
  const payments = new Map(channels.map((c) => [c, zeros()]));
  const duplicates = new Map(channels.map((c) => [c, zeros()]));
  const byOutcome = new Map(outcomes.map((o) => [o, zeros()]));
  for (const row of stats.rows) {
    const i = index.get(Date.parse(row.bucket));
    if (i === undefined || !deliveries.has(row.channel)) continue;
    deliveries.get(row.channel)![i] += row.deliveries;
    payments.get(row.channel)![i] += row.paymentDeliveries;
    duplicates.get(row.channel)![i] += row.duplicateDeliveries;
    for (const [outcome, n] of Object.entries(row.outcomes)) byOutcome.get(outcome)![i] += n;
  }
  const rate = (channel: string) =>
    duplicates
      .get(channel)!
      .map((d, i) => (payments.get(channel)![i] === 0 ? 0 : Math.round((d / payments.get(channel)![i]) * 1000) / 10));
  const color = (i: number) => PALETTE[i % PALETTE.length];
  const label = (code: string) => codeLabel(code, lang());
  return {
    times: hours.map((hour) => hour / 1000),
    byChannel: channels.map((c, i) => ({ label: label(c), values: deliveries.get(c)!, color: color(i) })),
    duplicateRate: channels.map((c, i) => ({ label: label(c), values: rate(c), color: color(i) })),
    byOutcome: outcomes.map((o, i) => ({ label: label(o), values: byOutcome.get(o)!, color: color(i) })),
  };
}

export function OverviewPage() {
  const overview = useGet<Overview>('/admin/overview');
  const stats = useGet<Stats>('/admin/stats/callbacks?bucket=hour');
  const vocabulary = useVocabulary();
  return (
    <>
      <h1>{t('overview')}</h1>
      <Show loaded={vocabulary}>
        {(lists) => <Show loaded={stats}>{(s) => <Charts stats={s} channels={lists.channels} />}</Show>}
      </Show>
      <Show loaded={overview}>{(o) => <OverviewCards o={o} />}</Show>
    </>
  );
}

function Charts({ stats, channels }: { stats: Stats; channels: string[] }) {
  const series = useMemo(() => hourly(stats, channels), [stats, channels]);
  return (
    <div className="charts">
      <TimeChart title={t('deliveriesPerHour')} times={series.times} series={series.byChannel} />
      <TimeChart title={t('deliveriesByOutcome')} times={series.times} series={series.byOutcome} />
      <TimeChart title={t('duplicateRatePerHour')} times={series.times} series={series.duplicateRate} />
    </div>
  );
}

const CountList = ({ items, href }: { items: CountByKey[]; href: (key: string) => string }) =>
  items.length === 0 ? (
    <p>{t('none')}</p>
  ) : (
    <ul>
      {items.map((a) => (
        <li key={a.key}>
          <a href={href(a.key)}>
            <Code value={a.key} />
          </a>
          : {a.count}
        </li>
      ))}
    </ul>
  );

function OverviewCards({ o }: { o: Overview }) {
  const card = (id: string, title: React.ReactNode, body: React.ReactNode) => (
    <Card size="small" className="card" title={<h2 id={id}>{title}</h2>} aria-labelledby={id} role="region">
      {body}
    </Card>
  );
  return (
    <>
      <div className="cards">
        {card(
          'latency',
          t('latency'),
          <dl>
            <dt>{t('p50')}</dt>
            <dd data-testid="p50">{formatMs(o.latency.p50Ms)}</dd>
            <dt>{t('p99')}</dt>
            <dd data-testid="p99">{formatMs(o.latency.p99Ms)}</dd>
            <dt>{t('deliveries')}</dt>
            <dd>{o.latency.deliveries}</dd>
          </dl>,
        )}
        {card(
          'open-anomalies',
          <a href="#/anomalies">{t('openAnomalies')}</a>,
          <CountList items={o.openAnomalies} href={(key) => `#/anomalies?type=${key}`} />,
        )}
        {card(
          'awaiting',
          <a href="#/approvals">{t('awaitingApproval')}</a>,
          <Statistic value={o.refundsAwaitingApproval} aria-label={t('awaitingApproval')} />,
        )}
        {card(
          'unsettled',
          t('unsettledRefunds'),
          <CountList items={o.unsettledRefunds} href={(key) => `#/refunds?status=${key}`} />,
        )}
        {card(
          'dead-letters',
          <a href="#/dead-letters">{t('deadLetters')}</a>,
          <Statistic value={o.deadLetters} aria-label={t('deadLetters')} />,
        )}
        {card(
          'spool',
          t('spool'),
          o.spool.enabled ? (
            <dl>
              <dt>{t('pending')}</dt>
              <dd>{o.spool.pending}</dd>
              <dt>{t('parked')}</dt>
              <dd>{o.spool.parked}</dd>
              <dt>{t('quarantined')}</dt>
              <dd>{o.spool.quarantined}</dd>
              <dt>{t('oldest')}</dt>
              <dd>{o.spool.oldestAgeSeconds}</dd>
            </dl>
          ) : (
            <p>{t('spoolOff')}</p>
          ),
        )}
      </div>
      <DataTable<Reconciled>
        caption={t('lastReconciliations')}
        rowKey={(r) => `${r.channel}-${r.merchantId}-${r.date}`}
        rows={o.reconciliations}
        columns={[
          { title: t('channel'), width: 110, render: (_, r) => <Code value={r.channel} /> },
          { title: t('account'), ellipsis: true, render: (_, r) => r.merchantId },
          {
            title: t('date'),
            width: 150,
            render: (_, r) => <a href={`#/reconciliation/${r.channel}/${r.date}`}>{formatDay(r.date, locale())}</a>,
          },
          { title: t('status'), width: 130, render: (_, r) => <Status value={r.status} /> },
          { title: t('counts'), render: (_, r) => <Counts counts={r.counts} /> },
          { title: t('at'), width: 200, render: (_, r) => <Time iso={r.finishedAt} /> },
        ]}
      />
      <DataTable<ExpiringCredential>
        caption={t('expiringCredentials')}
        rowKey={(c) => `${c.channel}-${c.account}-${c.kind}`}
        rows={o.expiringCredentials}
        columns={[
          { title: t('channel'), width: 110, render: (_, c) => <Code value={c.channel} /> },
          { title: t('account'), ellipsis: true, render: (_, c) => c.account || t('channelWide') },
          { title: t('kind'), width: 200, render: (_, c) => <Code value={c.kind} /> },
          { title: t('validTo'), width: 200, render: (_, c) => <Time iso={c.validTo} /> },
          { title: t('daysLeft'), width: 160, render: (_, c) => <DaysLeft validTo={c.validTo} now={o.at} /> },
        ]}
      />
    </>
  );
}

/** Whole days until a certificate stops being valid (0 on its last day, negative once expired); under 30 highlighted. */
function DaysLeft({ validTo, now }: { validTo: string; now: string }) {
  const days = Math.floor((Date.parse(validTo) - Date.parse(now)) / DAY_MS);
  const soon = days < SOON_DAYS;
  return (
    <span className={soon ? 'days-left soon' : 'days-left'} data-testid="days-left" data-soon={soon}>
      <span className="days">{days}</span>
      {soon ? (
        <>
          {' '}
          <Tag className="status tone-red expires-soon">{t('expiresSoon')}</Tag>
        </>
      ) : null}
    </span>
  );
}

/** A run's counts by outcome, each outcome by its label. */
export function Counts({ counts }: { counts: Record<string, number> | null }) {
  if (!counts) return <span>—</span>;
  return (
    <span className="counts">
      {Object.entries(counts).map(([k, v], i) => (
        <span key={k}>
          {i > 0 ? ', ' : ''}
          <Code value={k} />: {v}
        </span>
      ))}
    </span>
  );
}
