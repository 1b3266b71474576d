import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, post } from '../api';
import { t } from '../i18n';
import { canAct, OrderLink, Show, Table, Time, useGet, useOperator, ViewerNote } from '../ui';

interface DeadLetter {
  stage: string;
  eventId: string;
  type: string;
  orderNo: string;
  attempts: number;
  lastError: string | null;
  deadLetteredAt: string;
}

export function DeadLettersPage() {
  const list = useGet<{ items: DeadLetter[] }>('/admin/dead-letters');
  return html`<h1>${t('deadLetters')}</h1>
    <${ViewerNote} />
    <${Show} loaded=${list}>
      ${(l: { items: DeadLetter[] }) =>
        html`<${Table}
          caption=${t('deadLetters')}
          head=${[t('stage'), t('eventId'), t('type'), t('order'), t('attempts'), t('lastError'), t('deadLetteredAt'), t('actions')]}
          rows=${l.items.map((d) => [
            d.stage,
            d.eventId,
            d.type,
            html`<${OrderLink} orderNo=${d.orderNo} />`,
            d.attempts,
            d.lastError ?? '',
            html`<${Time} iso=${d.deadLetteredAt} />`,
            html`<${Replay} eventId=${d.eventId} onDone=${list.reload} />`,
          ])}
        />`}
    <//>`;
}

function Replay({ eventId, onDone }: { eventId: string; onDone: () => void }) {
  const disabled = !canAct(useOperator());
  const [problem, setProblem] = useState<string | null>(null);
  const replay = async () => {
    try {
      await post(`/admin/dead-letters/${encodeURIComponent(eventId)}/replay`);
      onDone();
    } catch (error) {
      setProblem((error as ApiError).message);
    }
  };
  return html`<button type="button" disabled=${disabled} onClick=${replay} aria-label=${`${t('replay')} ${eventId}`}>
      ${t('replay')}
    </button>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}`;
}
