import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, post, query } from '../api';
import { lang, t } from '../i18n';
import { Route } from '../router';
import { canAct, Show, Status, Table, Time, useGet, useOperator, ViewerNote } from '../ui';
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
  },
};
const w = () => WORDS[lang()];

interface Summary {
  id: string;
  channel: string;
  notifyPath: string;
  reason: string;
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

interface Hours {
  perHour: number;
  rows: Array<{ channel: string; hour: string; kind: string; kept: number; dropped: number }>;
}

const link = (id: string) => html`<a href=${`#/refused/${id}`} aria-label=${`${w().open} #${id}`}>#${id}</a>`;

/** The list, filtered by channel and reason (from the API's vocabulary), newest first, and the hourly cap's counts. */
export function RefusedNotificationsPage({ route }: { route: Route }) {
  const channel = route.params.get('channel') ?? '';
  const reason = route.params.get('reason') ?? '';
  const cursor = route.params.get('cursor') ?? '';
  const vocabulary = useVocabulary().data;
  const list = useGet<Page>(`/admin/refused-notifications${query({ channel, reason, cursor })}`);
  const hours = useGet<Hours>('/admin/refused-notifications/hours');
  const chips = (label: string, name: 'channel' | 'reason', values: string[], selected: string) =>
    html`<nav aria-label=${label} class="chips">
      <a href=${`#/refused${query({ channel, reason, [name]: '' })}`} aria-current=${selected === '' ? 'page' : undefined}
        >${t('any')}</a
      >
      ${values.map(
        (v) =>
          html`<a href=${`#/refused${query({ channel, reason, [name]: v })}`} aria-current=${v === selected ? 'page' : undefined}
            >${v}</a
          >`,
      )}
    </nav>`;
  return html`<h1>${w().title}</h1>
    ${chips(t('channel'), 'channel', vocabulary?.channels ?? [], channel)}
    ${chips(w().reason, 'reason', vocabulary?.refusalReasons ?? [], reason)}
    <${Show} loaded=${list}>
      ${(page: Page) =>
        html`<${Table}
            caption=${w().title}
            head=${['#', t('channel'), w().reason, w().timesSeen, w().firstSeen, w().lastSeen, t('status')]}
            rows=${page.items.map((r) => [
              link(r.id),
              r.channel,
              r.reason,
              r.timesSeen,
              html`<${Time} iso=${r.firstSeenAt} />`,
              html`<${Time} iso=${r.lastSeenAt} />`,
              html`<${Status} value=${r.status} />`,
            ])}
          />
          ${page.nextCursor
            ? html`<p><a href=${`#/refused${query({ channel, reason, cursor: page.nextCursor })}`}>${t('next')}</a></p>`
            : null}`}
    <//>
    <${Show} loaded=${hours}>
      ${(h: Hours) =>
        html`<p>${w().cap}: <strong>${h.perHour}</strong></p>
          <${Table}
            caption=${w().hours}
            head=${[w().hour, t('channel'), w().kind, w().kept, w().dropped]}
            rows=${h.rows.map((r) => [html`<${Time} iso=${r.hour} />`, r.channel, w()[r.kind === 'SIGNED' ? 'signed' : 'unsigned'], r.kept, r.dropped])}
          />`}
    <//>`;
}

/** One refused notification: why, how often, its headers and bytes, and (for an admin) a re-verification. */
export function RefusedNotificationPage({ id }: { id: string }) {
  const detail = useGet<Detail>(`/admin/refused-notifications/${encodeURIComponent(id)}`);
  return html`<${Show} loaded=${detail}>
    ${(d: Detail) =>
      html`<h1>${w().one} #${d.id}</h1>
        <dl class="facts">
          <dt>${t('channel')}</dt>
          <dd>${d.channel}</dd>
          <dt>${w().endpoint}</dt>
          <dd>POST /notify/${d.notifyPath}</dd>
          <dt>${w().reason}</dt>
          <dd>${d.reason}</dd>
          <dt>${t('status')}</dt>
          <dd><${Status} value=${d.status} /></dd>
          <dt>${w().timesSeen}</dt>
          <dd>${d.timesSeen}</dd>
          <dt>${w().firstSeen}</dt>
          <dd><${Time} iso=${d.firstSeenAt} beijing /></dd>
          <dt>${w().lastSeen}</dt>
          <dd><${Time} iso=${d.lastSeenAt} /></dd>
          <dt>${w().reverified}</dt>
          <dd>${d.reverifiedAt ? html`<${Time} iso=${d.reverifiedAt} /> (${d.reverifiedBy}, ${d.reverifyCount})` : '—'}</dd>
          <dt>${w().reverifyReason}</dt>
          <dd>${d.reverifyReason ?? '—'}</dd>
          <dt>${w().bytes}</dt>
          <dd>${d.bodyBytes}</dd>
          <dt>${w().sha256}</dt>
          <dd><code>${d.bodySha256}</code></dd>
        </dl>
        <${Reverify} id=${d.id} onDone=${detail.reload} />
        <h2>${t('headers')}</h2>
        <pre tabindex="0">
${Object.entries(d.headers)
            .map(([k, v]) => `${k}: ${v}`)
            .join('\n')}</pre
        >
        <h2>${t('body')}</h2>
        ${d.masked ? html`<p class="note">${d.rawBody === null ? w().unreadable : w().masked}</p>` : null}
        ${d.rawBody === null ? null : html`<pre tabindex="0">${d.rawBody}</pre>`}
        ${d.rawBodyBase64
          ? html`<details>
              <summary>${t('bodyBase64')}</summary>
              <pre tabindex="0">${d.rawBodyBase64}</pre>
            </details>`
          : null}`}
  <//>`;
}

function Reverify({ id, onDone }: { id: string; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const reverify = async () => {
    setBusy(true);
    setProblem(null);
    try {
      const answer = await post<{ accepted: boolean; reverifyReason: string | null }>(
        `/admin/refused-notifications/${encodeURIComponent(id)}/reverify`,
      );
      setOutcome(answer.accepted ? w().accepted : `${w().refusedAgain}: ${answer.reverifyReason ?? ''}`);
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    } finally {
      setBusy(false);
    }
  };
  return html`<section aria-labelledby="reverify-title">
    <h2 id="reverify-title">${w().reverify}</h2>
    <${ViewerNote} />
    <p class="help" id="reverify-help">${w().reverifyHelp}</p>
    <button type="button" disabled=${disabled || busy} aria-describedby="reverify-help" onClick=${reverify}>
      ${w().reverify}
    </button>
    <p role="status">${outcome ?? ''}</p>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
  </section>`;
}
