import { useState } from 'react';
import { Button, Space } from 'antd';
import { ApiError, post, query } from '../api';
import { beijingDate, formatDay } from '../format';
import { locale, t } from '../i18n';
import { navigate, Route } from '../router';
import {
  canAct,
  Code,
  DataTable,
  DayField,
  Id,
  Money,
  OrderLink,
  Said,
  Show,
  Status,
  Time,
  useGet,
  useOperator,
  ViewerNote,
} from '../ui';
import { Counts } from './overview';

interface Run {
  channel: string;
  merchantId: string;
  date: string;
  status: string;
  attempts: number;
  billLines: number;
  counts: Record<string, number> | null;
  detail: string | null;
  finishedAt: string | null;
}

interface Item {
  outcome: string;
  kind: string;
  transactionId: string | null;
  orderNo: string | null;
  refundNo: string | null;
  channelAmount: number | null;
  localAmount: number | null;
  resolution: string | null;
  detail: string | null;
}

/** Runs by bill day (Beijing), channel and account. */
export function ReconciliationPage({ route }: { route: Route }) {
  const to = route.params.get('to') ?? beijingDate(-1);
  const from = route.params.get('from') ?? beijingDate(-7);
  const [days, setDays] = useState({ from, to });
  const list = useGet<{ runs: Run[] }>(`/admin/reconciliations${query({ from, to })}`);
  return (
    <>
      <h1>{t('reconciliation')}</h1>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(`#/reconciliation${query(days)}`);
        }}
      >
        <DayField
          id="rec-from"
          label={t('from')}
          value={days.from}
          onChange={(d) => setDays((x) => ({ ...x, from: d }))}
        />
        <DayField id="rec-to" label={t('to')} value={days.to} onChange={(d) => setDays((x) => ({ ...x, to: d }))} />
        <Button type="primary" htmlType="submit">
          {t('filter')}
        </Button>
      </form>
      <Show loaded={list}>
        {(l) => (
          <DataTable<Run>
            caption={`${t('runs')} ${formatDay(from, locale())} – ${formatDay(to, locale())}`}
            rowKey={(r) => `${r.channel}-${r.merchantId}-${r.date}`}
            rows={l.runs}
            columns={[
              {
                title: t('date'),
                width: 150,
                render: (_, r) => <a href={`#/reconciliation/${r.channel}/${r.date}`}>{formatDay(r.date, locale())}</a>,
              },
              { title: t('channel'), width: 110, render: (_, r) => <Code value={r.channel} /> },
              { title: t('account'), ellipsis: true, render: (_, r) => r.merchantId },
              { title: t('status'), width: 130, render: (_, r) => <Status value={r.status} /> },
              { title: t('counts'), render: (_, r) => <Counts counts={r.counts} /> },
              { title: t('at'), width: 200, render: (_, r) => <Time iso={r.finishedAt} /> },
              {
                title: t('actions'),
                width: 90,
                fixed: 'right',
                render: (_, r) => <a href={`#/reconciliation/${r.channel}/${r.date}`}>{t('show')}</a>,
              },
            ]}
          />
        )}
      </Show>
    </>
  );
}

export function ReconciliationDayPage({ channel, date }: { channel: string; date: string }) {
  const day = useGet<{ runs: Array<Run & { items: Item[] }> }>(
    `/admin/reconciliations/${encodeURIComponent(channel)}/${encodeURIComponent(date)}`,
  );
  return (
    <>
      <h1>
        {t('reconciliation')} <Code value={channel} /> {formatDay(date, locale())}
      </h1>
      <ViewerNote />
      <Rerun channel={channel} date={date} onDone={day.reload} />
      <Show loaded={day}>
        {(d) =>
          d.runs.map((run) => (
            <section key={run.merchantId} aria-label={`${run.channel} ${run.merchantId}`}>
              <h2>
                {run.merchantId} <Status value={run.status} />
              </h2>
              <p>
                {t('counts')}: <Counts counts={run.counts} /> · {run.billLines} · {t('attempts')} {run.attempts}
                {run.detail ? ` · ${run.detail}` : ''}
              </p>
              <DataTable<Item>
                caption={`${t('items')} ${run.merchantId}`}
                rowKey={(i) => `${i.kind}-${i.transactionId}-${i.refundNo}-${i.outcome}`}
                rows={run.items}
                columns={[
                  { title: t('outcome'), width: 150, render: (_, i) => <Status value={i.outcome} /> },
                  { title: t('kind'), width: 90, render: (_, i) => i.kind },
                  { title: t('order'), render: (_, i) => <OrderLink orderNo={i.orderNo} /> },
                  { title: t('transaction'), render: (_, i) => <Id value={i.transactionId} /> },
                  { title: t('refundNo'), render: (_, i) => <Id value={i.refundNo} /> },
                  {
                    title: t('channelAmount'),
                    width: 120,
                    render: (_, i) => (i.channelAmount === null ? '—' : <Money minor={i.channelAmount} />),
                  },
                  {
                    title: t('localAmount'),
                    width: 120,
                    render: (_, i) => (i.localAmount === null ? '—' : <Money minor={i.localAmount} />),
                  },
                  {
                    title: t('detail'),
                    ellipsis: true,
                    render: (_, i) => [i.resolution, i.detail].filter(Boolean).join(' · '),
                  },
                ]}
              />
            </section>
          ))
        }
      </Show>
    </>
  );
}

function Rerun({ channel, date, onDone }: { channel: string; date: string; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const [message, setMessage] = useState<string | null>(null);
  const run = async () => {
    try {
      const answer = await post<{ runs: Array<{ merchantId: string; started: boolean }> }>(
        `/admin/reconciliations/${encodeURIComponent(channel)}/${encodeURIComponent(date)}/run`,
      );
      setMessage(`${t('rerunStarted')}: ${answer.runs.map((r) => `${r.merchantId} ${r.started}`).join(', ')}`);
      onDone();
    } catch (error) {
      setMessage((error as ApiError).message);
    }
  };
  return (
    <Space className="actions-bar">
      <Button type="primary" disabled={disabled} onClick={() => void run()}>
        {t('rerun')}
      </Button>
      {message ? <Said>{message}</Said> : null}
    </Space>
  );
}
