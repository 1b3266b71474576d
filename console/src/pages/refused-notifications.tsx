import { useState } from 'react';
import { Alert, Button, Descriptions, Input } from 'antd';
import { ApiError, post, query } from '../api';
import { lang, t } from '../i18n';
import { navigate, Route } from '../router';
import {
  actionsColumn,
  canAct,
  Code,
  DataTable,
  headerText,
  Id,
  NextPage,
  OrderLink,
  Pre,
  Problem,
  RawDrawer,
  Show,
  Status,
  Time,
  useGet,
  useOperator,
  ViewerNote,
} from '../ui';
import { useVocabulary } from '../vocabulary';

/** This page's own words, in both languages (the shared dictionary keeps the navigation's). */
const WORDS = {
  en: {
    title: 'Refused notifications',
    one: 'Refused notification',
    reason: 'Reason',
    timesSeen: 'Times refused',
    firstSeen: 'First refused',
    lastSeen: 'Last refused',
    bytes: 'Bytes',
    sha256: 'SHA-256 of the bytes',
    endpoint: 'Endpoint',
    reverify: 'Re-verify',
    reverifyHelp:
      'Runs the stored bytes through the notify route again, with the keys configured now; its time window is judged at when it was received. A payment settles at most once.',
    reverified: 'Last re-verified',
    reverifyReason: 'Refused again for',
    accepted: 'Accepted: it verified and was settled.',
    refusedAgain: 'Refused again',
    hours: 'Kept and dropped per hour (last 24 h, UTC)',
    cap: 'New ones kept per channel, hour and kind',
    kind: 'Kind',
    signed: 'Signed (unknown order)',
    unsigned: 'Not verified',
    hour: 'Hour',
    kept: 'Kept',
    dropped: 'Dropped (over the cap)',
    masked: "The payer's identifiers are masked for a viewer.",
    unreadable: 'The channel cannot read these bytes to mask them: an admin sees them.',
    open: 'Open',
    orderNo: 'Order number',
    transactionId: 'Transaction id',
    orderNote:
      'It verified and decrypted, for an order this service does not know: register this order, then re-verify it.',
    bytesAndHeaders: 'Headers and bytes',
    filter: 'Filter',
  },
  zh: {
    title: '被拒绝的通知',
    one: '被拒绝的通知',
    reason: '拒绝原因',
    timesSeen: '被拒次数',
    firstSeen: '首次拒绝时间',
    lastSeen: '最近拒绝时间',
    bytes: '字节数',
    sha256: '报文 SHA-256',
    endpoint: '回调地址',
    reverify: '重新验签',
    reverifyHelp:
      '用当前配置的密钥，让保存的原始报文再走一次回调流程；时间窗口按当初接收的时间判断。同一笔支付最多入账一次。',
    reverified: '最近重新验签',
    reverifyReason: '再次被拒原因',
    accepted: '已通过：验签成功并已处理。',
    refusedAgain: '再次被拒',
    hours: '每小时保存与丢弃数（最近 24 小时，UTC）',
    cap: '每渠道、每小时、每类最多保存新通知数',
    kind: '类别',
    signed: '验签通过（订单不存在）',
    unsigned: '未通过验签',
    hour: '小时',
    kept: '已保存',
    dropped: '已丢弃（超过上限）',
    masked: '只读角色看到的报文已遮盖付款人标识。',
    unreadable: '渠道无法解析该报文以遮盖付款人标识：仅管理员可查看。',
    open: '打开',
    orderNo: '订单号',
    transactionId: '交易号',
    orderNote: '该通知验签、解密成功，但本服务没有这笔订单：请先登记该订单，再重新验签。',
    bytesAndHeaders: '请求头与原始报文',
    filter: '筛选',
  },
};
const w = () => WORDS[lang()];

interface Summary {
  id: string;
  channel: string;
  notifyPath: string;
  reason: string;
  orderNo: string | null;
  transactionId: string | null;
  bodySha256: string;
  bodyBytes: number;
  timesSeen: number;
  firstSeenAt: string;
  lastSeenAt: string;
  status: string;
  reverifyCount: number;
  reverifiedAt: string | null;
  reverifiedBy: string | null;
  reverifyReason: string | null;
}

interface Detail extends Summary {
  headers: Record<string, string>;
  rawBody: string | null;
  rawBodyBase64: string | null;
  masked: boolean;
}

interface Page {
  items: Summary[];
  nextCursor: string | null;
}

interface HourRow {
  channel: string;
  hour: string;
  kind: string;
  kept: number;
  dropped: number;
}

interface Hours {
  perHour: number;
  rows: HourRow[];
}

/** The list, filtered by channel and reason (from the API's vocabulary) and by order number or transaction id, newest first, and the hourly cap's counts. */
export function RefusedNotificationsPage({ route }: { route: Route }) {
  const channel = route.params.get('channel') ?? '';
  const reason = route.params.get('reason') ?? '';
  const orderNo = route.params.get('orderNo') ?? '';
  const transactionId = route.params.get('transactionId') ?? '';
  const cursor = route.params.get('cursor') ?? '';
  const current = { channel, reason, orderNo, transactionId };
  const [ids, setIds] = useState({ orderNo, transactionId });
  const vocabulary = useVocabulary().data;
  const list = useGet<Page>(`/admin/refused-notifications${query({ ...current, cursor })}`);
  const hours = useGet<Hours>('/admin/refused-notifications/hours');
  const chips = (label: string, name: 'channel' | 'reason', values: string[], selected: string) => (
    <nav aria-label={label} className="chips">
      <a href={`#/refused${query({ ...current, [name]: '' })}`} aria-current={selected === '' ? 'page' : undefined}>
        {t('any')}
      </a>
      {values.map((v) => (
        <a
          key={v}
          href={`#/refused${query({ ...current, [name]: v })}`}
          aria-current={v === selected ? 'page' : undefined}
          data-code={v}
        >
          <Code value={v} />
        </a>
      ))}
    </nav>
  );
  return (
    <>
      <h1>{w().title}</h1>
      {chips(t('channel'), 'channel', vocabulary?.channels ?? [], channel)}
      {chips(w().reason, 'reason', vocabulary?.refusalReasons ?? [], reason)}
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(
            `#/refused${query({ ...current, orderNo: ids.orderNo.trim(), transactionId: ids.transactionId.trim() })}`,
          );
        }}
      >
        <span className="field">
          <label htmlFor="refused-order">{w().orderNo}</label>
          <Input
            id="refused-order"
            value={ids.orderNo}
            onChange={(e) => setIds((x) => ({ ...x, orderNo: e.target.value }))}
          />
        </span>
        <span className="field">
          <label htmlFor="refused-transaction">{w().transactionId}</label>
          <Input
            id="refused-transaction"
            value={ids.transactionId}
            onChange={(e) => setIds((x) => ({ ...x, transactionId: e.target.value }))}
          />
        </span>
        <Button type="primary" htmlType="submit">
          {w().filter}
        </Button>
      </form>
      <Show loaded={list}>
        {(page) => (
          <>
            <DataTable<Summary>
              caption={w().title}
              rowKey={(r) => r.id}
              rows={page.items}
              columns={[
                {
                  title: '#',
                  width: 70,
                  render: (_, r) => (
                    <a href={`#/refused/${r.id}`} aria-label={`${w().open} #${r.id}`}>
                      #{r.id}
                    </a>
                  ),
                },
                { title: t('channel'), width: 100, render: (_, r) => <Code value={r.channel} /> },
                { title: w().reason, width: 140, render: (_, r) => <Code value={r.reason} /> },
                { title: w().orderNo, render: (_, r) => <Id value={r.orderNo} /> },
                { title: w().transactionId, render: (_, r) => <Id value={r.transactionId} /> },
                { title: w().timesSeen, width: 90, render: (_, r) => r.timesSeen },
                { title: w().lastSeen, width: 200, render: (_, r) => <Time iso={r.lastSeenAt} /> },
                { title: t('status'), width: 100, render: (_, r) => <Status value={r.status} /> },
                actionsColumn<Summary>(80, (r) => <a href={`#/refused/${r.id}`}>{w().open}</a>),
              ]}
            />
            <NextPage href={page.nextCursor && `#/refused${query({ ...current, cursor: page.nextCursor })}`} />
          </>
        )}
      </Show>
      <Show loaded={hours}>
        {(h) => (
          <>
            <p>
              {w().cap}: <strong>{h.perHour}</strong>
            </p>
            <DataTable<HourRow>
              caption={w().hours}
              rowKey={(r) => `${r.hour}-${r.channel}-${r.kind}`}
              rows={h.rows}
              columns={[
                { title: w().hour, width: 220, render: (_, r) => <Time iso={r.hour} /> },
                { title: t('channel'), render: (_, r) => <Code value={r.channel} /> },
                { title: w().kind, render: (_, r) => w()[r.kind === 'SIGNED' ? 'signed' : 'unsigned'] },
                { title: w().kept, width: 100, render: (_, r) => r.kept },
                { title: w().dropped, width: 140, render: (_, r) => r.dropped },
              ]}
            />
          </>
        )}
      </Show>
    </>
  );
}

/** One refused notification: why, how often, the order it names when it could be read, its headers and bytes in a drawer, and (for an admin) a re-verification. */
export function RefusedNotificationPage({ id }: { id: string }) {
  const detail = useGet<Detail>(`/admin/refused-notifications/${encodeURIComponent(id)}`);
  const [open, setOpen] = useState(false);
  return (
    <Show loaded={detail}>
      {(d) => (
        <>
          <h1>
            {w().one} #{d.id}
          </h1>
          {d.orderNo ? <Alert type="warning" showIcon title={w().orderNote} className="note" /> : null}
          <Descriptions
            className="facts"
            size="small"
            bordered
            column={2}
            items={[
              { label: t('channel'), children: <Code value={d.channel} /> },
              { label: w().endpoint, children: `POST /notify/${d.notifyPath}` },
              { label: w().reason, children: <Code value={d.reason} /> },
              { label: t('status'), children: <Status value={d.status} /> },
              { label: w().orderNo, children: <OrderLink orderNo={d.orderNo} /> },
              { label: w().transactionId, children: <Id value={d.transactionId} /> },
              { label: w().timesSeen, children: d.timesSeen },
              { label: w().bytes, children: d.bodyBytes },
              { label: w().firstSeen, children: <Time iso={d.firstSeenAt} /> },
              { label: w().lastSeen, children: <Time iso={d.lastSeenAt} /> },
              {
                label: w().reverified,
                children: d.reverifiedAt ? (
                  <>
                    <Time iso={d.reverifiedAt} /> ({d.reverifiedBy}, {d.reverifyCount})
                  </>
                ) : (
                  '—'
                ),
              },
              { label: w().reverifyReason, children: <Code value={d.reverifyReason} /> },
              { label: w().sha256, span: 2, children: <Id value={d.bodySha256} /> },
            ]}
          />
          <Reverify id={d.id} onDone={detail.reload} />
          <section aria-labelledby="refused-bytes">
            <h2 id="refused-bytes">{w().bytesAndHeaders}</h2>
            <Button onClick={() => setOpen(true)}>{t('raw')}</Button>
          </section>
          <RawDrawer title={`${w().one} #${d.id}`} open={open} onClose={() => setOpen(false)}>
            <h3>{t('headers')}</h3>
            <Pre text={headerText(d.headers)} />
            <h3>{t('body')}</h3>
            {d.masked ? <Alert type="info" title={d.rawBody === null ? w().unreadable : w().masked} /> : null}
            {d.rawBody === null ? null : <Pre text={d.rawBody} />}
            {d.rawBodyBase64 ? (
              <>
                <h3>{t('bodyBase64')}</h3>
                <Pre text={d.rawBodyBase64} />
              </>
            ) : null}
          </RawDrawer>
        </>
      )}
    </Show>
  );
}

function Reverify({ id, onDone }: { id: string; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ accepted: boolean; reason: string | null } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const reverify = async () => {
    setBusy(true);
    setProblem(null);
    try {
      const answer = await post<{ accepted: boolean; reverifyReason: string | null }>(
        `/admin/refused-notifications/${encodeURIComponent(id)}/reverify`,
      );
      setOutcome({ accepted: answer.accepted, reason: answer.reverifyReason });
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="reverify-title" className="card action">
      <h2 id="reverify-title">{w().reverify}</h2>
      <ViewerNote />
      <p className="help" id="reverify-help">
        {w().reverifyHelp}
      </p>
      <Button
        type="primary"
        disabled={disabled || busy}
        aria-describedby="reverify-help"
        onClick={() => void reverify()}
      >
        {w().reverify}
      </Button>
      <p role="status">
        {outcome === null ? (
          ''
        ) : outcome.accepted ? (
          w().accepted
        ) : (
          <>
            {w().refusedAgain}: <Code value={outcome.reason} />
          </>
        )}
      </p>
      <Problem text={problem} />
    </section>
  );
}
