import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, post } from '../api';
import { t } from '../i18n';
import { canAct, Show, Status, Table, Time, useGet, useOperator, ViewerNote } from '../ui';

export interface Resolution {
  status: 'AWAITING_APPROVAL' | 'APPLIED';
  reason: string;
  reference: string | null;
  note: string;
  requestedBy: string;
  requestedAt: string;
  reviewedBy: string | null;
  reviewedAt: string | null;
}

interface Resolvable {
  id: string;
  status: string;
  resolution?: Resolution | null;
}

interface Decision {
  id: string;
  operatorId: string;
  action: string;
  createdAt: string;
}

const REASONS = ['ACCEPTED_AS_PAID', 'REFUNDED_OUTSIDE', 'DUPLICATE_OF', 'SETTLED_WITH_CHANNEL'];

/**
 * Closing an anomaly without a refund: the form while it is OPEN without a resolution, then the
 * resolution itself, with Approve and Reject for a second admin while it awaits approval.
 */
export function ResolutionSection({ anomaly, onDone }: { anomaly: Resolvable; onDone: () => void }) {
  const resolution = anomaly.resolution ?? null;
  if (resolution) return html`<${ResolutionFacts} anomaly=${anomaly} resolution=${resolution} onDone=${onDone} />`;
  if (anomaly.status !== 'OPEN') return null;
  return html`<${ResolveForm} anomaly=${anomaly} onDone=${onDone} />`;
}

function ResolveForm({ anomaly, onDone }: { anomaly: Resolvable; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const [reason, setReason] = useState(REASONS[0]);
  const [reference, setReference] = useState('');
  const [note, setNote] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!note.trim()) return setProblem(t('noteRequired'));
    setProblem(null);
    setBusy(true);
    try {
      const body = { reason, note: note.trim(), ...(reference.trim() ? { reference: reference.trim() } : {}) };
      await post(`/admin/anomalies/${encodeURIComponent(anomaly.id)}/resolve`, body);
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    } finally {
      setBusy(false);
    }
  };

  return html`<section class="card action" aria-labelledby="resolve-form">
    <h2 id="resolve-form">${t('closeWithoutRefund')}</h2>
    <form onSubmit=${submit} novalidate>
      <label for="resolve-why">${t('closedAs')}</label>
      <select
        id="resolve-why"
        value=${reason}
        disabled=${disabled}
        onChange=${(e: Event) => setReason((e.target as HTMLSelectElement).value)}
      >
        ${REASONS.map((r) => html`<option value=${r}>${r}</option>`)}
      </select>
      <label for="resolve-reference">${t('reference')}</label>
      <input
        id="resolve-reference"
        autocomplete="off"
        maxlength="64"
        value=${reference}
        disabled=${disabled}
        aria-describedby="resolve-reference-help"
        onInput=${(e: Event) => setReference((e.target as HTMLInputElement).value)}
      />
      <p id="resolve-reference-help" class="help">${t('referenceHelp')}</p>
      <label for="resolve-note">${t('note')}</label>
      <textarea
        id="resolve-note"
        required
        maxlength="256"
        disabled=${disabled}
        value=${note}
        onInput=${(e: Event) => setNote((e.target as HTMLTextAreaElement).value)}
      ></textarea>
      ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
      <button type="submit" disabled=${disabled || busy}>${t('resolve')}</button>
    </form>
  </section>`;
}

function ResolutionFacts({
  anomaly,
  resolution,
  onDone,
}: {
  anomaly: Resolvable;
  resolution: Resolution;
  onDone: () => void;
}) {
  const disabled = !canAct(useOperator());
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const decide = async (verb: 'approve' | 'reject') => {
    setBusy(true);
    setProblem(null);
    try {
      const body = verb === 'reject' ? { reason: 'rejected in the console' } : {};
      await post(`/admin/anomalies/${encodeURIComponent(anomaly.id)}/resolution/${verb}`, body);
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    } finally {
      setBusy(false);
    }
  };
  const awaiting = resolution.status === 'AWAITING_APPROVAL';
  return html`<section class="card action" aria-labelledby="resolution">
    <h2 id="resolution">${t('resolution')}</h2>
    <dl class="facts">
      <dt>${t('status')}</dt>
      <dd><${Status} value=${resolution.status} /></dd>
      <dt>${t('closedAs')}</dt>
      <dd>${resolution.reason}${resolution.reference ? ` (${resolution.reference})` : ''}</dd>
      <dt>${t('note')}</dt>
      <dd>${resolution.note}</dd>
      <dt>${t('requestedBy')}</dt>
      <dd>${resolution.requestedBy}, <${Time} iso=${resolution.requestedAt} /></dd>
      ${
        resolution.reviewedBy
          ? html`<dt>${t('reviewedBy')}</dt>
              <dd>${resolution.reviewedBy}, <${Time} iso=${resolution.reviewedAt} /></dd>`
          : null
      }
    </dl>
    ${
      awaiting
        ? html`<${ViewerNote} />
            <p>${t('awaitingSecond')}</p>
            <div class="decide">
              <button type="button" disabled=${disabled || busy} onClick=${() => decide('approve')}>
                ${t('approveResolution')}
              </button>
              <button type="button" class="secondary" disabled=${disabled || busy} onClick=${() => decide('reject')}>
                ${t('rejectResolution')}
              </button>
            </div>`
        : null
    }
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
  </section>`;
}

/**
 * Every decision on the anomaly, from the audit log: its resolution's and its refunds'. Without the
 * refund numbers: the refunds' own table beside it names them.
 */
export function AnomalyHistory({ id, round }: { id: string; round: string }) {
  const history = useGet<{ items: Decision[] }>(`/admin/anomalies/${encodeURIComponent(id)}/history?at=${round}`);
  return html`<${Show} loaded=${history}>
    ${(h: { items: Decision[] }) =>
      html`<${Table}
        caption=${t('decisions')}
        head=${[t('at'), t('operator'), t('action')]}
        rows=${h.items.map((d) => [html`<${Time} iso=${d.createdAt} />`, d.operatorId, d.action])}
      />`}
  <//>`;
}
