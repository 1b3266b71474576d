import { useState } from 'react';
import { Button, Descriptions, Form, Input, Select } from 'antd';
import { ApiError, post, query } from '../api';
import { formatAmount, parseAmount } from '../format';
import { codeLabel } from '../catalogue';
import { lang, t } from '../i18n';
import { navigate, Route } from '../router';
import {
  actionsColumn,
  canAct,
  Code,
  DataTable,
  DayField,
  CodeSelect,
  Id,
  Money,
  NextPage,
  OrderLink,
  Problem,
  Said,
  Show,
  ShowLink,
  Status,
  Time,
  useGet,
  useOperator,
  ViewerNote,
} from '../ui';
import { useVocabulary } from '../vocabulary';
import { OrderDetail, OrderSections, Payment } from './orders';
import { AnomalyHistory, Resolution, ResolutionSection } from './anomaly-resolution';

export interface Anomaly {
  id: string;
  type: string;
  orderNo: string;
  transactionId: string;
  channel: string;
  orderAmount: number;
  paidAmount: number;
  currency: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  resolution?: Resolution | null;
}

const dayStart = (d: string) => (d ? `${d}T00:00:00Z` : undefined);

/** The list, filtered by the hash's query (so a filter can be linked to from the overview). */
export function AnomaliesPage({ route }: { route: Route }) {
  const p = route.params;
  const initial = {
    type: p.get('type') ?? '',
    status: p.get('status') ?? '',
    channel: p.get('channel') ?? '',
    from: p.get('from') ?? '',
    to: p.get('to') ?? '',
  };
  const cursor = p.get('cursor') ?? '';
  const [filters, setFilters] = useState(initial);
  const set = (key: keyof typeof initial) => (value: string) => setFilters((f) => ({ ...f, [key]: value }));
  const vocabulary = useVocabulary();
  const list = useGet<{ items: Anomaly[]; nextCursor: string | null }>(
    `/admin/anomalies${query({ ...initial, cursor, from: dayStart(initial.from), to: dayStart(initial.to) })}`,
  );
  return (
    <>
      <h1>{t('anomalies')}</h1>
      <Show loaded={vocabulary}>
        {(lists) => (
          <form
            className="filters"
            onSubmit={(e) => {
              e.preventDefault();
              navigate(`#/anomalies${query(filters)}`);
            }}
          >
            <CodeSelect
              id="type"
              label={t('type')}
              value={filters.type}
              options={lists.anomalyTypes}
              onChange={set('type')}
            />
            <CodeSelect
              id="status"
              label={t('status')}
              value={filters.status}
              options={lists.anomalyStatuses}
              onChange={set('status')}
            />
            <CodeSelect
              id="channel"
              label={t('channel')}
              value={filters.channel}
              options={lists.channels}
              onChange={set('channel')}
            />
            <DayField id="from" label={`${t('from')} (UTC)`} value={filters.from} onChange={set('from')} />
            <DayField id="to" label={`${t('to')} (UTC)`} value={filters.to} onChange={set('to')} />
            <Button type="primary" htmlType="submit">
              {t('filter')}
            </Button>
          </form>
        )}
      </Show>
      <Show loaded={list}>
        {(page) => (
          <>
            <DataTable<Anomaly>
              caption={t('anomalies')}
              rowKey={(a) => a.id}
              rows={page.items}
              columns={[
                { title: '#', width: 72, render: (_, a) => <a href={`#/anomalies/${a.id}`}>{a.id}</a> },
                { title: t('type'), width: 150, render: (_, a) => <Code value={a.type} /> },
                {
                  title: t('status'),
                  width: 150,
                  render: (_, a) => (
                    <>
                      <Status value={a.status} />
                      {a.resolution?.status === 'AWAITING_APPROVAL' ? (
                        <span className="awaiting">
                          <Status value="AWAITING_APPROVAL" />
                        </span>
                      ) : null}
                    </>
                  ),
                },
                { title: t('channel'), width: 100, render: (_, a) => <Code value={a.channel} /> },
                { title: t('order'), render: (_, a) => <OrderLink orderNo={a.orderNo} /> },
                { title: t('transaction'), render: (_, a) => <Id value={a.transactionId} /> },
                {
                  title: t('paidAmount'),
                  width: 130,
                  render: (_, a) => <Money minor={a.paidAmount} currency={a.currency} />,
                },
                { title: t('created'), width: 200, render: (_, a) => <Time iso={a.createdAt} /> },
                actionsColumn<Anomaly>(90, (a) => <ShowLink href={`#/anomalies/${a.id}`} id={a.id} />),
              ]}
            />
            <NextPage href={page.nextCursor && `#/anomalies${query({ ...initial, cursor: page.nextCursor })}`} />
          </>
        )}
      </Show>
    </>
  );
}

export function AnomalyPage({ id }: { id: string }) {
  const anomaly = useGet<Anomaly>(`/admin/anomalies/${encodeURIComponent(id)}`);
  const order = useGet<OrderDetail>(anomaly.data ? `/admin/orders/${encodeURIComponent(anomaly.data.orderNo)}` : null);
  return (
    <Show loaded={anomaly}>
      {(a) => (
        <>
          <h1>
            {t('anomaly')} {a.id}: <Code value={a.type} />
          </h1>
          <Descriptions
            className="facts"
            size="small"
            column={3}
            bordered
            items={[
              {
                label: t('status'),
                children: (
                  <>
                    <Status value={a.status} />
                    {a.resolution?.status === 'AWAITING_APPROVAL' ? <Status value="AWAITING_APPROVAL" /> : null}
                  </>
                ),
              },
              { label: t('order'), children: <OrderLink orderNo={a.orderNo} /> },
              {
                label: t('transaction'),
                children: (
                  <>
                    <Code value={a.channel} /> <Id value={a.transactionId} />
                  </>
                ),
              },
              { label: t('orderAmount'), children: <Money minor={a.orderAmount} currency={a.currency} /> },
              { label: t('paidAmount'), children: <Money minor={a.paidAmount} currency={a.currency} /> },
              { label: t('created'), children: <Time iso={a.createdAt} /> },
            ]}
          />
          <Show loaded={order}>
            {(o) => (
              <>
                {a.resolution ? null : (
                  <RefundForm
                    anomaly={a}
                    payments={o.payments}
                    onDone={() => {
                      anomaly.reload();
                      order.reload();
                    }}
                  />
                )}
                <ResolutionSection anomaly={a} onDone={anomaly.reload} />
                <AnomalyHistory id={a.id} round={a.updatedAt} />
                <OrderSections detail={o} />
              </>
            )}
          </Show>
        </>
      )}
    </Show>
  );
}

const refundable = (p: Payment) => p.amount - p.refundReservedAmount;

/**
 * The form's own refund number: one per refund the operator means. A repeat of the same submission
 * (a double click, a retry after a lost answer) is the same refund; once the service answered, the
 * next submission is another refund, of any amount, the same one included. 34 characters, within
 * every channel's 64. getRandomValues, not randomUUID: the console may be served over plain HTTP.
 */
function newRefundNo(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `CR${Array.from(bytes, (b) => b.toString(16).padStart(2, '0'))
    .join('')
    .toUpperCase()}`;
}

/** An emergency refund of one of the order's transactions: the anomaly's by default, a reason required. */
function RefundForm({ anomaly, payments, onDone }: { anomaly: Anomaly; payments: Payment[]; onDone: () => void }) {
  const operator = useOperator();
  const disabled = !canAct(operator);
  const [transactionId, setTransactionId] = useState(anomaly.transactionId);
  const payment = payments.find((p) => p.transactionId === transactionId);
  const left = payment ? refundable(payment) : 0;
  const currency = payment?.currency ?? anomaly.currency;
  const [amount, setAmount] = useState(formatAmount(left, currency).replace(/,/g, ''));
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [result, setResult] = useState<{ refundNo: string; status: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [refundNo, setRefundNo] = useState(newRefundNo);

  const submit = async () => {
    const minor = parseAmount(amount, currency);
    if (minor === null || minor <= 0 || minor > left) return setProblem(t('badAmount'));
    if (!reason.trim()) return setProblem(t('reasonRequired'));
    setProblem(null);
    setBusy(true);
    try {
      const body = { orderNo: anomaly.orderNo, transactionId, amount: minor, reason: reason.trim(), refundNo };
      setResult(await post<{ refundNo: string; status: string }>('/admin/refunds/emergency', body));
      setRefundNo(newRefundNo());
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card action" aria-labelledby="refund-form">
      <h2 id="refund-form">{t('emergencyRefund')}</h2>
      <ViewerNote />
      <Form layout="vertical" onFinish={() => void submit()} className="narrow">
        <Form.Item label={t('transaction')} htmlFor="refund-transaction">
          <Select
            id="refund-transaction"
            value={transactionId}
            disabled={disabled}
            onChange={setTransactionId}
            options={payments.map((p) => ({
              value: p.transactionId,
              label: `${codeLabel(p.channel, lang())} ${p.transactionId}`,
            }))}
          />
        </Form.Item>
        <p>
          {t('refundable')}:{' '}
          <strong data-testid="refundable">
            <Money minor={left} currency={currency} />
          </strong>
        </p>
        <Form.Item label={`${t('amount')} (${currency})`} htmlFor="refund-amount" extra={t('amountHelp')}>
          <Input
            id="refund-amount"
            inputMode="decimal"
            autoComplete="off"
            value={amount}
            disabled={disabled}
            aria-describedby="refund-threshold"
            onChange={(e) => setAmount(e.target.value)}
          />
        </Form.Item>
        <ThresholdNote currency={currency} />
        <Form.Item label={t('reason')} htmlFor="refund-reason">
          <Input.TextArea
            id="refund-reason"
            maxLength={256}
            disabled={disabled}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
        </Form.Item>
        <Problem text={problem} />
        <Button type="primary" htmlType="submit" disabled={disabled || busy || left <= 0}>
          {t('refund')}
        </Button>
      </Form>
      {result ? (
        <Said>
          {t('refundRecorded')}: {result.refundNo} <Status value={result.status} />
          {result.status === 'AWAITING_APPROVAL' ? ` ${t('awaitingSecond')}` : ''}
        </Said>
      ) : null}
    </section>
  );
}

/** What the refund form must say: the approval threshold the server applies (GET /admin/vocabulary). */
function ThresholdNote({ currency }: { currency: string }) {
  const threshold = useVocabulary().data?.refundApprovalThreshold;
  if (threshold === undefined) return null;
  if (threshold === null)
    return (
      <p className="help" id="refund-threshold" data-testid="threshold">
        {t('noThreshold')}
      </p>
    );
  return (
    <p className="help" id="refund-threshold" data-testid="threshold">
      {t('thresholdHelp')}{' '}
      <strong>
        <Money minor={threshold} currency={currency} />
      </strong>
    </p>
  );
}
