import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { ApiError, get } from './api';
import { dayPattern, formatAmount, formatDay, formatMoment, parseDay } from './format';
import { locale, t } from './i18n';

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

export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => unknown }) {
  if (loaded.error) return html`<p class="error" role="alert">${t('error')}: ${loaded.error.message}</p>`;
  if (loaded.data === null) return html`<p aria-live="polite">${t('loading')}</p>`;
  return children(loaded.data);
}

export const Money = ({ minor, currency }: { minor: number | string; currency?: string }) =>
  html`<span class="money">${formatAmount(minor, currency)} ${currency ?? ''}</span>`;

/** Every moment the console shows: the operator's locale and zone, Beijing time beside it (formatMoment). */
export function Time({ iso }: { iso: string | null }) {
  const { local, beijing } = formatMoment(iso, locale());
  return html`<span class="time"
    ><time datetime=${iso ?? ''}>${local}</time>${
      beijing ? html` <small class="beijing">${t('beijing')} ${beijing}</small>` : null
    }</span
  >`;
}

export const Status = ({ value }: { value: string }) =>
  html`<span class=${`status status-${value.toLowerCase()}`}>${value}</span>`;

/** A malformed notification may name no order: then there is nothing to link to. */
export const OrderLink = ({ orderNo }: { orderNo: string }) =>
  orderNo ? html`<a href=${`#/orders/${encodeURIComponent(orderNo)}`}>${orderNo}</a>` : html`<span>—</span>`;

export function Table({ caption, head, rows }: { caption: string; head: string[]; rows: unknown[][] }) {
  if (rows.length === 0)
    return html`<h2 class="caption">${caption}</h2>
      <p>${t('none')}</p>`;
  return html`<div class="table-wrap">
    <table>
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          ${head.map((h) => html`<th scope="col">${h}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (row) =>
            html`<tr>
              ${row.map((cell) => html`<td>${cell}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** A note beside disabled controls, so that a viewer knows why they cannot act. */
export function ViewerNote() {
  const operator = useOperator();
  return canAct(operator) ? null : html`<p class="note">${t('viewerNote')}</p>`;
}

/** A filter's choice among the values the server lists (GET /admin/vocabulary), "Any" first. */
export function Select({ id, label, value, options }: { id: string; label: string; value: string; options: string[] }) {
  return html`<label for=${id}>${label}</label>
    <select id=${id} name=${id}>
      <option value="">${t('any')}</option>
      ${options.map((o) => html`<option value=${o} selected=${o === value}>${o}</option>`)}
    </select>`;
}

/**
 * A day for a filter, written and read as the console writes every date (the operator's locale,
 * its pattern in the label), not as the browser's own date input would (its UI language, which
 * may disagree). The form's value is read back with readDays.
 */
export function DayField({ id, name, label, value }: { id: string; name: string; label: string; value: string }) {
  return html`<label for=${id}>${label} (${dayPattern(locale())})</label>
    <input
      id=${id}
      name=${name}
      inputmode="numeric"
      size="10"
      autocomplete="off"
      value=${formatDay(value, locale())}
    />`;
}

/** A text or select field's value ('' when absent: FormData gives a File only for a file input, which these forms have none of). */
export function formText(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === 'string' ? value : '';
}

/** The form's day fields as yyyy-mm-dd ('' when empty); null and the problem when one is not a day. */
export function readDays(form: FormData, names: string[]): { days: Record<string, string> } | { problem: string } {
  const days: Record<string, string> = {};
  for (const name of names) {
    const text = formText(form, name).trim();
    const day = text ? parseDay(text, locale()) : '';
    if (day === null) return { problem: `${t('badDay')} ${dayPattern(locale())}: ${text}` };
    days[name] = day;
  }
  return { days };
}
