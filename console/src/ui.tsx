import { createContext, ReactNode, useCallback, useContext, useEffect, useState } from 'react';
import { Alert, Button, DatePicker, Drawer, Select, Table, Tag } from 'antd';
import { CheckOutlined, CopyOutlined } from '@ant-design/icons';
import type { TableColumnsType, TableColumnType } from 'antd';
import dayjs, { Dayjs } from 'dayjs';
import { ApiError, get } from './api';
import { codeLabel } from './catalogue';
import { dayPattern, formatAmount, formatMoment } from './format';
import { lang, locale, t } from './i18n';

export interface Operator {
  operatorId: string;
  role: 'admin' | 'viewer';
}

export const OperatorContext = createContext<Operator | null>(null);
export const useOperator = (): Operator => useContext(OperatorContext)!;
export const canAct = (operator: Operator): boolean => operator.role === 'admin';

export interface Loaded<T> {
  data: T | null;
  error: ApiError | null;
  reload: () => void;
}

/** GETs `path` (again whenever it changes, or on reload; a reload keeps showing the old data until the new arrives). */
export function useGet<T>(path: string | null): Loaded<T> {
  const [state, setState] = useState<{ path: string | null; data: T | null; error: ApiError | null }>({
    path,
    data: null,
    error: null,
  });
  const [round, setRound] = useState(0);
  useEffect(() => {
    if (!path) return;
    let live = true;
    get<T>(path).then(
      (data) => live && setState({ path, data, error: null }),
      (error: ApiError) => live && setState({ path, data: null, error }),
    );
    return () => {
      live = false;
    };
  }, [path, round]);
  const current = state.path === path ? state : { data: null, error: null };
  return { data: current.data, error: current.error, reload: useCallback(() => setRound((r) => r + 1), []) };
}

export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ReactNode }) {
  // A 404 is said in the console's language; any other error as the server words it.
  if (loaded.error?.status === 404) return <p>{t('notFound')}</p>;
  if (loaded.error) return <Problem text={`${t('error')}: ${loaded.error.message}`} />;
  if (loaded.data === null) return <p aria-live="polite">{t('loading')}</p>;
  return <>{children(loaded.data)}</>;
}

/** An error the operator must read: announced (role="alert"). */
export const Problem = ({ text }: { text: string | null | undefined }) =>
  text ? <Alert role="alert" type="error" showIcon title={text} className="problem" /> : null;

/** A success the operator is told of: announced politely (role="status"). */
export const Said = ({ children }: { children: ReactNode }) => (
  <div role="status" className="said">
    {children}
  </div>
);

export const Money = ({ minor, currency }: { minor: number | string; currency?: string }) => (
  <span className="money">
    {formatAmount(minor, currency)} {currency ?? ''}
  </span>
);

/** Every moment the console shows: the operator's locale and zone, Beijing time under it (formatMoment). */
export function Time({ iso }: { iso: string | null }) {
  const { local, beijing } = formatMoment(iso, locale());
  return (
    <span className="time">
      <time dateTime={iso ?? ''}>{local}</time>
      {beijing ? (
        <>
          {' '}
          <small className="beijing">
            {t('beijing')} {beijing}
          </small>
        </>
      ) : null}
    </span>
  );
}

/** A status's tone: its colours are the console's own (style.css), dark enough on their background for WCAG AA. */
const TONES: Record<string, string> = {
  AWAITING_APPROVAL: 'gold',
  OPEN: 'orange',
  PENDING: 'blue',
  CREATING: 'blue',
  CREATED: 'green',
  RETRY: 'orange',
  PROCESSING: 'blue',
  REFUNDING: 'blue',
  RUNNING: 'blue',
  SUCCEEDED: 'green',
  succeeded: 'green',
  PAID: 'green',
  RESOLVED: 'green',
  ACCEPTED: 'green',
  APPLIED: 'green',
  COMPLETED: 'green',
  MATCHED: 'green',
  REFUSED: 'red',
  FAILED: 'red',
  failed: 'red',
  ABNORMAL: 'red',
  DUPLICATE_PAYMENT: 'red',
  AMOUNT_MISMATCH: 'red',
  PAID_AFTER_CLOSE: 'red',
  MERCHANT_MISMATCH: 'red',
  MALFORMED_NOTIFICATION: 'red',
};

/** A code from the API, as the operator reads it: its label in the console's language, the code in its title. */
export const Code = ({ value }: { value: string | null | undefined }) =>
  value ? (
    <span className="code" title={value} data-code={value}>
      {codeLabel(value, lang())}
    </span>
  ) : (
    <span>—</span>
  );

/** A status: a coloured tag with its label (the class names the code, for the tests and the eye). */
export const Status = ({ value }: { value: string }) => (
  <Tag className={`status status-${value.toLowerCase()} tone-${TONES[value] ?? 'grey'}`} title={value}>
    {codeLabel(value, lang())}
  </Tag>
);

/**
 * A long id: cut with an ellipsis to its column by CSS (the whole id stays in the page, and in its
 * title), with a button that copies it.
 */
export function Id({ value, href }: { value: string | null | undefined; href?: string }) {
  const [copied, setCopied] = useState(false);
  if (!value) return <span>—</span>;
  const copy = () =>
    void navigator.clipboard.writeText(value).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  return (
    <span className="id">
      {href ? (
        <a className="id-text" href={href} title={value}>
          {value}
        </a>
      ) : (
        <span className="id-text" title={value}>
          {value}
        </span>
      )}
      <Button
        type="text"
        size="small"
        className="copy"
        icon={copied ? <CheckOutlined /> : <CopyOutlined />}
        aria-label={`${t('copy')} ${value}`}
        title={t('copy')}
        onClick={copy}
      />
    </span>
  );
}

/** A malformed notification may name no order: then there is nothing to link to. */
export const OrderLink = ({ orderNo }: { orderNo: string | null }) => (
  <Id value={orderNo} href={orderNo ? `#/orders/${encodeURIComponent(orderNo)}` : undefined} />
);

/**
 * A table that fits its page at 1,280 px: fixed layout (columns keep the widths given, long ids are
 * cut with an ellipsis and a copy button), the action column fixed on the right, a caption that
 * names it for assistive technology.
 */
export function DataTable<T extends object>({
  caption,
  columns,
  rows,
  rowKey,
}: {
  caption: string;
  columns: TableColumnsType<T>;
  rows: T[];
  rowKey: (row: T) => string;
}) {
  return (
    <Table<T>
      className="data-table"
      caption={<span className="caption">{caption}</span>}
      columns={columns}
      dataSource={rows}
      rowKey={rowKey}
      tableLayout="fixed"
      pagination={false}
      size="small"
      locale={{ emptyText: t('none') }}
    />
  );
}

/**
 * A table's last column: what can be done with the row, fixed on the right so that it stays in
 * sight at 1,280 px (and titled "Actions", which the browser suite looks for).
 */
export function actionsColumn<T>(width: number, render: (row: T) => ReactNode): TableColumnType<T> {
  return { title: t('actions'), width, fixed: 'right', render: (_, row) => render(row) };
}

/** A link to the row's own page, named with the row's id for assistive technology ("Show 42"). */
export const ShowLink = ({ href, id }: { href: string; id: string }) => (
  <a href={href} aria-label={`${t('show')} ${id}`}>
    {t('show')}
  </a>
);

/**
 * A row's action: a small button named with what it does and the row's id (every row has one, so
 * each needs its own name), disabled for viewers as the page says.
 */
export function RowButton({
  label,
  id,
  onClick,
  disabled,
  primary,
  danger,
}: {
  label: string;
  id: string;
  onClick: () => void;
  disabled?: boolean;
  primary?: boolean;
  danger?: boolean;
}) {
  return (
    <Button
      size="small"
      type={primary ? 'primary' : undefined}
      danger={danger}
      disabled={disabled}
      onClick={onClick}
      aria-label={`${label} ${id}`}
    >
      {label}
    </Button>
  );
}

/** The link to a paged list's next page, when the server says there is one. */
export const NextPage = ({ href }: { href: string | null }) =>
  href ? (
    <p>
      <a href={href}>{t('next')}</a>
    </p>
  ) : null;

/** A note beside disabled controls, so that a viewer knows why they cannot act. */
export function ViewerNote() {
  const operator = useOperator();
  return canAct(operator) ? null : <Alert type="info" title={t('viewerNote')} className="note" />;
}

/** A filter's choice among the values the server lists (GET /admin/vocabulary), "Any" first, each by its label. */
export function CodeSelect({
  id,
  label,
  value,
  options,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  options: string[];
  onChange: (value: string) => void;
}) {
  return (
    <span className="field">
      <label htmlFor={id}>{label}</label>
      <Select
        id={id}
        value={value}
        onChange={onChange}
        popupMatchSelectWidth={false}
        className="select"
        options={[{ value: '', label: t('any') }, ...options.map((o) => ({ value: o, label: codeLabel(o, lang()) }))]}
      />
    </span>
  );
}

/** Ant Design's date format for the console's locale: `MM/DD/YYYY` en-US, `DD/MM/YYYY` en-GB, `YYYY/MM/DD` zh-CN. */
export const dayFormat = (): string => dayPattern(locale()).toUpperCase();

/**
 * A day for a filter: Ant Design's DatePicker in the console's language (its zh_CN or en_US
 * locale), written as the console writes every date, its pattern in the label. The value is
 * `yyyy-mm-dd` ('' when empty).
 */
export function DayField({
  id,
  label,
  value,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (day: string) => void;
}) {
  return (
    <span className="field">
      <label htmlFor={id}>
        {label} ({dayPattern(locale())})
      </label>
      <DatePicker
        id={id}
        value={value ? dayjs(value) : null}
        format={dayFormat()}
        onChange={(day: Dayjs | null) => onChange(day ? day.format('YYYY-MM-DD') : '')}
      />
    </span>
  );
}

/** Raw bytes, headers, a decrypted resource: opened beside the page in a drawer, never in a table cell. */
export function RawDrawer({
  title,
  open,
  onClose,
  children,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ReactNode;
}) {
  // No mask: a masked drawer locks the page's scroll with an injected <style>, which the CSP refuses.
  return (
    <Drawer title={title} open={open} onClose={onClose} size={720} mask={false} destroyOnHidden>
      {children}
    </Drawer>
  );
}

export const Pre = ({ text, testId }: { text: string; testId?: string }) => (
  <pre tabIndex={0} className="raw" data-testid={testId}>
    {text}
  </pre>
);

export const headerText = (headers: Record<string, string>): string =>
  Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
