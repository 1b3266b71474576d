import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, session, whenUnauthenticated } from './api';
import { lang, setLang, t } from './i18n';
import { Route, useRoute } from './router';
import { Operator, OperatorContext } from './ui';
import { AnomaliesPage, AnomalyPage } from './pages/anomalies';
import { DeadLettersPage } from './pages/dead-letters';
import { OrderPage, OrdersPage } from './pages/orders';
import { OverviewPage } from './pages/overview';
import { ReconciliationDayPage, ReconciliationPage } from './pages/reconciliation';
import { ApprovalsPage, RefundsPage } from './pages/refunds';
import { RefusedNotificationPage, RefusedNotificationsPage } from './pages/refused-notifications';
import { WebhookEndpointPage, WebhooksPage } from './pages/webhooks';
import './style.css';

const SECTIONS = [
  ['', 'overview'],
  ['anomalies', 'anomalies'],
  ['approvals', 'approvals'],
  ['refunds', 'refunds'],
  ['orders', 'orders'],
  ['reconciliation', 'reconciliation'],
  ['dead-letters', 'deadLetters'],
  ['webhooks', 'webhooks'],
  ['refused', 'refused'],
] as const;

function page(route: Route) {
  const [section, id, date] = route.path;
  switch (section) {
    case 'anomalies':
      return id ? html`<${AnomalyPage} id=${id} />` : html`<${AnomaliesPage} route=${route} />`;
    case 'approvals':
      return html`<${ApprovalsPage} />`;
    case 'refunds':
      return html`<${RefundsPage} route=${route} />`;
    case 'orders':
      return id ? html`<${OrderPage} orderNo=${id} />` : html`<${OrdersPage} route=${route} />`;
    case 'reconciliation':
      return id && date
        ? html`<${ReconciliationDayPage} channel=${id} date=${date} />`
        : html`<${ReconciliationPage} route=${route} />`;
    case 'dead-letters':
      return html`<${DeadLettersPage} />`;
    case 'webhooks':
      return id ? html`<${WebhookEndpointPage} id=${id} />` : html`<${WebhooksPage} />`;
    case 'refused':
      return id ? html`<${RefusedNotificationPage} id=${id} />` : html`<${RefusedNotificationsPage} route=${route} />`;
    default:
      return html`<${OverviewPage} />`;
  }
}

function SignIn({ onSignedIn }: { onSignedIn: (operator: Operator) => void }) {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    session.signIn(token.trim());
    try {
      onSignedIn(await get<Operator>('/admin/me'));
    } catch (error) {
      session.signOut();
      setProblem((error as ApiError).status === 401 ? t('badToken') : (error as ApiError).message);
    }
  };
  return html`<main id="main" class="sign-in">
    <h1>${t('title')}</h1>
    <form onSubmit=${submit}>
      <label for="token">${t('token')}</label>
      <input
        id="token"
        type="password"
        autocomplete="off"
        required
        value=${token}
        aria-describedby="token-help"
        onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)}
      />
      <p id="token-help" class="help">${t('tokenHelp')}</p>
      ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
      <button type="submit">${t('signIn')}</button>
    </form>
  </main>`;
}

function App() {
  const route = useRoute();
  const [operator, setOperator] = useState<Operator | null>(null);
  const [checked, setChecked] = useState(false);
  const [, setLanguage] = useState(lang());

  useEffect(() => {
    whenUnauthenticated(() => {
      session.signOut();
      setOperator(null);
    });
    if (!session.token()) return setChecked(true);
    get<Operator>('/admin/me')
      .then(setOperator, () => session.signOut())
      .finally(() => setChecked(true));
  }, []);

  const toggleLanguage = () => {
    const next = lang() === 'zh' ? 'en' : 'zh';
    setLang(next);
    setLanguage(next);
  };
  const signOut = () => {
    session.signOut();
    setOperator(null);
  };

  const languageButton = html`<button
    type="button"
    class="secondary"
    lang=${lang() === 'zh' ? 'en' : 'zh-CN'}
    title=${t('languageName')}
    onClick=${toggleLanguage}
  >
    ${t('language')}
  </button>`;
  if (!checked) return null;
  if (!operator)
    return html`<header class="top"><span class="brand">${t('brand')}</span>${languageButton}</header>
      <${SignIn} onSignedIn=${setOperator} />`;

  const current = route.path[0] ?? '';
  return html`<${OperatorContext.Provider} value=${operator}>
    <a
      class="skip"
      href="#main"
      onClick=${(e: Event) => {
        e.preventDefault();
        document.getElementById('main')?.focus();
      }}
      >${t('skip')}</a
    >
    <header class="top">
      <span class="brand">${t('brand')}</span>
      <nav aria-label=${t('nav')}>
        ${SECTIONS.map(([path, key]) => html`<a href=${`#/${path}`} aria-current=${current === path ? 'page' : undefined}>${t(key)}</a>`)}
      </nav>
      <span class="who">${t('signedInAs')} <strong>${operator.operatorId}</strong> (${operator.role})</span>
      ${languageButton}
      <button type="button" class="secondary" onClick=${signOut}>${t('signOut')}</button>
    </header>
    <main id="main" tabindex="-1">${page(route)}</main>
  <//>`;
}

setLang(lang());
render(html`<${App} />`, document.getElementById('app')!);
