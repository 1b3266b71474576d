import { useState } from 'react';
import { Alert, Button, Collapse, Descriptions, Input } from 'antd';
import { ApiError, download, get, query } from '../api';
import { t } from '../i18n';
import { navigate, Route } from '../router';
import {
  actionsColumn,
  canAct,
  Code,
  CodeSelect,
  DataTable,
  DayField,
  headerText,
  Id,
  Money,
  NextPage,
  OrderLink,
  Pre,
  Problem,
  RawDrawer,
  RowButton,
  Said,
  Show,
  ShowLink,
  Status,
  Time,
  useGet,
  useOperator,
} from '../ui';
import { useVocabulary } from '../vocabulary';
import type { Anomaly } from './anomalies';
import { Refund, refundColumns } from './refunds';

export interface Payment {
  channel: string;
  transactionId: string;
  merchantId: string | null;
  amount: number;
  currency: string;
  refundReservedAmount: number;
  firstReceivedAt: string;
}

interface DeliverySummary {
  id: string;
  channel: string;
  eventType: string;
  transactionId: string | null;
  outcome: string;
  receivedAt: string;
  processingMs: number | null;
}

interface ChannelCall {
  request: string;
  channel: string;
  outcome: string;
  transactionId: string | null;
  detail: string | null;
  at: string;
}

interface HistoryRow {
  fromStatus: string | null;
  toStatus: string;
  event: string;
  cause: string | null;
  changedAt: string;
}

export interface OrderDetail {
  order: {
    orderNo: string;
    status: string;
    amount: number;
    currency: string;
    channel: string | null;
    createdAt: string;
  };
  history: HistoryRow[];
  payments: Payment[];
  deliveries: { count: number; items: DeliverySummary[] };
  anomalies: Anomaly[];
  refunds: Refund[];
  channelCalls: ChannelCall[];
  createdPayment: CreatedPayment | null;
}

/** The payment this service created at the channel (POST /payment-orders with method): GET /admin/orders/:orderNo. */
interface CreatedPayment {
  method: string;
  state: string;
  createdAt: string;
  expiresAt: string;
  validUntil: string | null;
  channelTradeId: string | null;
  attempts: number;
  failureCode: string | null;
  failureMessage: string | null;
  /** The buyer's signed parameters: only their names are shown, never their values. */
  buyer: { params: Record<string, string>; form?: { action: string; method: string } } | null;
}

interface OrderItem {
  orderNo: string;
  status: string;
  amount: number;
  currency: string;
  channel: string | null;
  merchantId: string | null;
  transactionId: string | null;
  createdAt: string;
  paidAt: string | null;
}

interface OrderList {
  items: OrderItem[];
  nextCursor: string | null;
}

/** A date input's day (yyyy-mm-dd) as the UTC instant it starts at, as the filters' labels say. */
export const utcDayStart = (day: string): string | undefined => (day ? `${day}T00:00:00Z` : undefined);

/** The list of orders, filtered by the hash's query, with its CSV export; and the search by number or transaction id. */
export function OrdersPage({ route }: { route: Route }) {
  const p = route.params;
  const initial = {
    status: p.get('status') ?? '',
    channel: p.get('channel') ?? '',
    from: p.get('from') ?? '',
    to: p.get('to') ?? '',
  };
  const [filters, setFilters] = useState(initial);
  const set = (key: keyof typeof initial) => (value: string) => setFilters((f) => ({ ...f, [key]: value }));
  const cursor = p.get('cursor') ?? '';
  const apiFilters = { ...initial, from: utcDayStart(initial.from), to: utcDayStart(initial.to) };
  const vocabulary = useVocabulary();
  const list = useGet<OrderList>(`/admin/orders${query({ ...apiFilters, cursor })}`);
  const [exported, setExported] = useState<{ name?: string; problem?: string } | null>(null);
  const exportCsv = async () => {
    setExported(null);
    try {
      setExported({ name: await download(`/admin/orders.csv${query(apiFilters)}`) });
    } catch (error) {
      setExported({ problem: (error as ApiError).message });
    }
  };
  return (
    <>
      <h1>{t('orders')}</h1>
      <OrderSearch />
      <Show loaded={vocabulary}>
        {(lists) => (
          <form
            className="filters"
            onSubmit={(e) => {
              e.preventDefault();
              setExported(null);
              navigate(`#/orders${query(filters)}`);
            }}
          >
            <CodeSelect
              id="status"
              label={t('status')}
              value={filters.status}
              options={lists.orderStatuses}
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
            <Button onClick={() => void exportCsv()} aria-describedby="export-help">
              {t('exportCsv')}
            </Button>
          </form>
        )}
      </Show>
      <p id="export-help" className="help">
        {t('exportHelp')}
      </p>
      {exported?.name ? (
        <Said>
          {t('exported')}: {exported.name}
        </Said>
      ) : null}
      <Problem text={exported?.problem} />
      <Show loaded={list}>
        {(page) => (
          <>
            <DataTable<OrderItem>
              caption={t('ordersList')}
              rowKey={(o) => o.orderNo}
              rows={page.items}
              columns={[
                { title: t('orderNo'), render: (_, o) => <OrderLink orderNo={o.orderNo} /> },
                { title: t('status'), width: 130, render: (_, o) => <Status value={o.status} /> },
                { title: t('channel'), width: 100, render: (_, o) => <Code value={o.channel} /> },
                { title: t('account'), width: 110, ellipsis: true, render: (_, o) => o.merchantId ?? '—' },
                { title: t('transaction'), render: (_, o) => <Id value={o.transactionId} /> },
                { title: t('amount'), width: 120, render: (_, o) => <Money minor={o.amount} currency={o.currency} /> },
                {
                  title: `${t('created')} / ${t('paidAt')}`,
                  width: 200,
                  render: (_, o) => (
                    <div className="moments">
                      <Time iso={o.createdAt} />
                      {o.paidAt ? <Time iso={o.paidAt} /> : null}
                    </div>
                  ),
                },
                actionsColumn<OrderItem>(80, (o) => (
                  <ShowLink href={`#/orders/${encodeURIComponent(o.orderNo)}`} id={o.orderNo} />
                )),
              ]}
            />
            <NextPage href={page.nextCursor && `#/orders${query({ ...initial, cursor: page.nextCursor })}`} />
          </>
        )}
      </Show>
    </>
  );
}

/** Looks the text up as an order number, then as a transaction id. */
function OrderSearch() {
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    const wanted = text.trim();
    if (!wanted) return;
    setProblem(null);
    try {
      await get(`/admin/orders/${encodeURIComponent(wanted)}`);
      return navigate(`#/orders/${encodeURIComponent(wanted)}`);
    } catch (error) {
      if ((error as ApiError).status !== 404) return setProblem((error as ApiError).message);
    }
    try {
      const { orderNo } = await get<{ orderNo: string }>(`/admin/transactions/${encodeURIComponent(wanted)}`);
      navigate(`#/orders/${encodeURIComponent(orderNo)}`);
    } catch (error) {
      setProblem((error as ApiError).status === 404 ? t('notFound') : (error as ApiError).message);
    }
  };
  return (
    <>
      <form className="filters" role="search" onSubmit={(e) => void submit(e)}>
        <span className="field">
          <label htmlFor="order-search">{t('search')}</label>
          <Input id="order-search" value={text} autoComplete="off" onChange={(e) => setText(e.target.value)} />
        </span>
        <Button htmlType="submit">{t('find')}</Button>
      </form>
      <Problem text={problem} />
    </>
  );
}

export function OrderPage({ orderNo }: { orderNo: string }) {
  const detail = useGet<OrderDetail>(`/admin/orders/${encodeURIComponent(orderNo)}`);
  return (
    <Show loaded={detail}>
      {(d) => (
        <>
          <h1>
            {t('order')} {d.order.orderNo}
          </h1>
          <Descriptions
            className="facts"
            size="small"
            bordered
            column={4}
            items={[
              { label: t('status'), children: <Status value={d.order.status} /> },
              { label: t('amount'), children: <Money minor={d.order.amount} currency={d.order.currency} /> },
              { label: t('channel'), children: <Code value={d.order.channel} /> },
              { label: t('created'), children: <Time iso={d.order.createdAt} /> },
            ]}
          />
          <DataTable<HistoryRow>
            caption={t('history')}
            rowKey={(h) => `${h.changedAt}-${h.toStatus}-${h.event}`}
            rows={d.history}
            columns={[
              {
                title: t('status'),
                render: (_, h) => (
                  <>
                    {h.fromStatus ? <Status value={h.fromStatus} /> : '∅'} → <Status value={h.toStatus} />
                  </>
                ),
              },
              { title: t('event'), render: (_, h) => <Code value={h.event} /> },
              { title: t('cause'), ellipsis: true, render: (_, h) => h.cause ?? '' },
              { title: t('at'), width: 220, render: (_, h) => <Time iso={h.changedAt} /> },
            ]}
          />
          {d.createdPayment ? <CreatedPaymentFacts payment={d.createdPayment} /> : null}
          <OrderSections detail={d} />
        </>
      )}
    </Show>
  );
}

/**
 * What was created at the channel and until when; the channel's code and message when it refused.
 * Of the buyer's parameters only the names show: a signed parameter (paySign, a form's signature)
 * is what the buyer pays with, not for the page.
 */
function CreatedPaymentFacts({ payment: p }: { payment: CreatedPayment }) {
  return (
    <section className="card" aria-labelledby="created-payment" data-testid="created-payment">
      <h2 id="created-payment">{t('createdPayment')}</h2>
      <Descriptions
        className="facts"
        size="small"
        bordered
        column={{ xs: 1, md: 2, xl: 3 }}
        items={[
          { label: t('method'), children: <Code value={p.method} /> },
          { label: t('paymentState'), children: <Status value={p.state} /> },
          { label: t('created'), children: <Time iso={p.createdAt} /> },
          { label: t('expiresAt'), children: <Time iso={p.expiresAt} /> },
          { label: t('validUntil'), children: p.validUntil ? <Time iso={p.validUntil} /> : '—' },
          { label: t('attempts'), children: p.attempts },
          { label: t('channelTradeId'), children: <Id value={p.channelTradeId} /> },
          {
            label: t('buyerParams'),
            children: p.buyer ? <span className="param-names">{Object.keys(p.buyer.params).join(', ')}</span> : '—',
          },
          ...(p.failureCode || p.failureMessage
            ? [
                {
                  label: p.state === 'REFUSED' ? t('channelRefusal') : t('detail'),
                  children: (
                    <span data-testid="channel-refusal">
                      {p.failureCode ? <code>{p.failureCode}</code> : null} {p.failureMessage ?? ''}
                    </span>
                  ),
                },
              ]
            : []),
        ]}
      />
    </section>
  );
}

/** What an order and an anomaly's page both show: transactions, deliveries, refunds, anomalies, channel calls. */
export function OrderSections({ detail }: { detail: OrderDetail }) {
  const d = detail;
  const [raw, setRaw] = useState<string | null>(null);
  return (
    <>
      <DataTable<Payment>
        caption={t('payments')}
        rowKey={(p) => p.transactionId}
        rows={d.payments}
        columns={[
          { title: t('channel'), width: 100, render: (_, p) => <Code value={p.channel} /> },
          { title: t('transaction'), render: (_, p) => <Id value={p.transactionId} /> },
          { title: t('account'), width: 120, ellipsis: true, render: (_, p) => p.merchantId ?? '—' },
          { title: t('amount'), width: 120, render: (_, p) => <Money minor={p.amount} currency={p.currency} /> },
          {
            title: t('reserved'),
            width: 120,
            render: (_, p) => <Money minor={p.refundReservedAmount} currency={p.currency} />,
          },
          {
            title: t('refundable'),
            width: 120,
            render: (_, p) => <Money minor={p.amount - p.refundReservedAmount} currency={p.currency} />,
          },
          { title: t('received'), width: 200, render: (_, p) => <Time iso={p.firstReceivedAt} /> },
        ]}
      />
      <DataTable<DeliverySummary>
        caption={`${t('deliveries')} (${d.deliveries.count})`}
        rowKey={(v) => v.id}
        rows={d.deliveries.items}
        columns={[
          { title: '#', width: 70, render: (_, v) => v.id },
          {
            title: t('event'),
            render: (_, v) => (
              <>
                <Code value={v.channel} /> {v.eventType}
              </>
            ),
          },
          { title: t('transaction'), render: (_, v) => <Id value={v.transactionId} /> },
          { title: t('outcome'), width: 130, render: (_, v) => <Status value={v.outcome} /> },
          { title: t('received'), width: 200, render: (_, v) => <Time iso={v.receivedAt} /> },
          { title: t('processingMs'), width: 90, render: (_, v) => v.processingMs ?? '—' },
          actionsColumn<DeliverySummary>(110, (v) => (
            <RowButton label={t('raw')} id={`#${v.id}`} onClick={() => setRaw(v.id)} />
          )),
        ]}
      />
      <RawDrawer title={`${t('raw')} #${raw ?? ''}`} open={raw !== null} onClose={() => setRaw(null)}>
        {raw ? <RawBytes id={raw} /> : null}
      </RawDrawer>
      <DataTable<Refund>
        caption={t('refundsOf')}
        rowKey={(r) => r.refundNo}
        rows={d.refunds}
        columns={refundColumns()}
      />
      <DataTable<Anomaly>
        caption={t('anomaliesOf')}
        rowKey={(a) => a.id}
        rows={d.anomalies}
        columns={[
          { title: '#', width: 80, render: (_, a) => <a href={`#/anomalies/${a.id}`}>{a.id}</a> },
          { title: t('type'), render: (_, a) => <Code value={a.type} /> },
          { title: t('status'), width: 130, render: (_, a) => <Status value={a.status} /> },
          { title: t('transaction'), render: (_, a) => <Id value={a.transactionId} /> },
          {
            title: t('paidAmount'),
            width: 130,
            render: (_, a) => <Money minor={a.paidAmount} currency={a.currency} />,
          },
        ]}
      />
      <DataTable<ChannelCall>
        caption={t('channelCalls')}
        rowKey={(c) => `${c.at}-${c.request}-${c.outcome}`}
        rows={d.channelCalls}
        columns={[
          { title: t('request'), width: 90, render: (_, c) => <Code value={c.request} /> },
          { title: t('channel'), width: 100, render: (_, c) => <Code value={c.channel} /> },
          { title: t('outcome'), width: 130, render: (_, c) => <Status value={c.outcome} /> },
          { title: t('transaction'), render: (_, c) => <Id value={c.transactionId} /> },
          { title: t('detail'), ellipsis: true, render: (_, c) => c.detail ?? '' },
          { title: t('at'), width: 200, render: (_, c) => <Time iso={c.at} /> },
        ]}
      />
    </>
  );
}

interface Delivery {
  headers: Record<string, string>;
  rawBody: string | null;
  rawBodyBase64?: string | null;
  rawPrunedAt: string | null;
  /** The server can open an encrypted part of it (WeChat Pay APIv3's resource). */
  encryptedContent: boolean;
}

/** The exact bytes received: headers, the body as text, as base64 for what is not UTF-8; WeChat Pay's resource decrypted. */
function RawBytes({ id }: { id: string }) {
  const delivery = useGet<Delivery>(`/admin/deliveries/${id}`);
  return (
    <Show loaded={delivery}>
      {(v) => (
        <div className="raw-bytes">
          <h3>{t('headers')}</h3>
          <Pre text={headerText(v.headers)} />
          {v.rawPrunedAt ? (
            <p>
              {t('pruned')} <Time iso={v.rawPrunedAt} />
            </p>
          ) : (
            <>
              <h3>{t('body')}</h3>
              <Pre text={v.rawBody ?? ''} />
              <Collapse
                size="small"
                items={[
                  ...(v.rawBodyBase64
                    ? [{ key: 'base64', label: t('bodyBase64'), children: <Pre text={v.rawBodyBase64} /> }]
                    : []),
                  ...(v.encryptedContent
                    ? [{ key: 'decrypted', label: t('decrypted'), children: <Decrypted id={id} /> }]
                    : []),
                ]}
              />
            </>
          )}
        </div>
      )}
    </Show>
  );
}

interface DecryptedContent {
  masked: boolean;
  content: Record<string, unknown>;
}

/** The encrypted resource opened by the server (when its panel opens): exact for an admin (audited), the payer masked for a viewer. */
function Decrypted({ id }: { id: string }) {
  const admin = canAct(useOperator());
  const content = useGet<DecryptedContent>(`/admin/deliveries/${id}/decrypted`);
  return (
    <>
      <Alert type="info" title={admin ? t('decryptedAudited') : t('decryptedMasked')} />
      <Show loaded={content}>{(c) => <Pre testId="decrypted" text={JSON.stringify(c.content, null, 2)} />}</Show>
    </>
  );
}
