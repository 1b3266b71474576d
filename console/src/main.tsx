import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { StyleProvider } from '@ant-design/cssinjs';
import { Button, ConfigProvider, Input, Layout, Space, Typography } from 'antd';
import enUS from 'antd/locale/en_US';
import zhCN from 'antd/locale/zh_CN';
import dayjs from 'dayjs';
import 'dayjs/locale/zh-cn';
// Ant Design's styles as extracted at build time (console/antd-style.mjs): nothing injected at run time.
import './generated/antd.css';
// The theme the build extracted the styles with: the same CSS-variable scope (cssVar.key), no hashed class names.
import ANTD_THEME from './antd-theme.json';
import { ApiError, get, session, whenUnauthenticated } from './api';
import { Key, lang, setLang, t } from './i18n';
import { Route, useRoute } from './router';
import { Operator, OperatorContext, Problem } from './ui';
import { AnomaliesPage, AnomalyPage } from './pages/anomalies';
import { DeadLettersPage } from './pages/dead-letters';
import { MerchantsPage } from './pages/merchants';
import { OrderPage, OrdersPage } from './pages/orders';
import { OverviewPage } from './pages/overview';
import { ReconciliationDayPage, ReconciliationPage } from './pages/reconciliation';
import { ApprovalsPage, RefundsPage } from './pages/refunds';
import { RefusedNotificationPage, RefusedNotificationsPage } from './pages/refused-notifications';
import { WebhookEndpointPage, WebhooksPage } from './pages/webhooks';
import './style.css';

const SECTIONS: ReadonlyArray<readonly [string, Key]> = [
  ['', 'overview'],
  ['anomalies', 'anomalies'],
  ['approvals', 'approvals'],
  ['refunds', 'refunds'],
  ['orders', 'orders'],
  ['reconciliation', 'reconciliation'],
  ['dead-letters', 'deadLetters'],
  ['webhooks', 'webhooks'],
  ['merchants', 'merchants'],
  ['refused', 'refused'],
];

function page(route: Route) {
  const [section, id, date] = route.path;
  switch (section) {
    case 'anomalies':
      return id ? <AnomalyPage id={id} /> : <AnomaliesPage route={route} />;
    case 'approvals':
      return <ApprovalsPage />;
    case 'refunds':
      return <RefundsPage route={route} />;
    case 'orders':
      return id ? <OrderPage orderNo={id} /> : <OrdersPage route={route} />;
    case 'reconciliation':
      return id && date ? <ReconciliationDayPage channel={id} date={date} /> : <ReconciliationPage route={route} />;
    case 'dead-letters':
      return <DeadLettersPage />;
    case 'webhooks':
      return id ? <WebhookEndpointPage id={id} /> : <WebhooksPage />;
    case 'merchants':
      return <MerchantsPage route={route} />;
    case 'refused':
      return id ? <RefusedNotificationPage id={id} /> : <RefusedNotificationsPage route={route} />;
    default:
      return <OverviewPage />;
  }
}

function SignIn({ onSignedIn }: { onSignedIn: (operator: Operator) => void }) {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    session.signIn(token.trim());
    try {
      onSignedIn(await get<Operator>('/admin/me'));
    } catch (error) {
      session.signOut();
      setProblem((error as ApiError).status === 401 ? t('badToken') : (error as ApiError).message);
    }
  };
  return (
    <main id="main" className="sign-in">
      <h1>{t('title')}</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label htmlFor="token">{t('token')}</label>
        <Input.Password
          id="token"
          autoComplete="off"
          required
          value={token}
          aria-describedby="token-help"
          onChange={(e) => setToken(e.target.value)}
        />
        <p id="token-help" className="help">
          {t('tokenHelp')}
        </p>
        <Problem text={problem} />
        <Button type="primary" htmlType="submit">
          {t('signIn')}
        </Button>
      </form>
    </main>
  );
}

function App() {
  const route = useRoute();
  const [operator, setOperator] = useState<Operator | null>(null);
  const [checked, setChecked] = useState(false);
  const [language, setLanguage] = useState(lang());

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
    dayjs.locale(next === 'zh' ? 'zh-cn' : 'en');
    setLanguage(next);
  };
  const signOut = () => {
    session.signOut();
    setOperator(null);
  };

  const languageButton = (
    <Button lang={language === 'zh' ? 'en' : 'zh-CN'} title={t('languageName')} onClick={toggleLanguage}>
      {t('language')}
    </Button>
  );
  const current = route.path[0] ?? '';
  return (
    // zeroRuntime: Ant Design writes no <style> at run time; its styles are antd/dist/antd.css, extracted at build time.
    <ConfigProvider
      locale={language === 'zh' ? zhCN : enUS}
      theme={{ ...ANTD_THEME, zeroRuntime: true }}
      wave={{ disabled: true }}
      button={{ autoInsertSpace: false }}
      key={language}
    >
      {!checked ? null : !operator ? (
        <>
          <header className="top">
            <span className="brand">{t('brand')}</span>
            {languageButton}
          </header>
          <SignIn onSignedIn={setOperator} />
        </>
      ) : (
        <OperatorContext.Provider value={operator}>
          <a
            className="skip"
            href="#main"
            onClick={(e) => {
              e.preventDefault();
              document.getElementById('main')?.focus();
            }}
          >
            {t('skip')}
          </a>
          <Layout className="shell">
            <Layout.Sider width={208} theme="light" className="side">
              <div className="brand">{t('brand')}</div>
              <nav aria-label={t('nav')}>
                <ul className="menu">
                  {SECTIONS.map(([path, key]) => (
                    <li key={path}>
                      <a href={`#/${path}`} aria-current={current === path ? 'page' : undefined}>
                        {t(key)}
                      </a>
                    </li>
                  ))}
                </ul>
              </nav>
            </Layout.Sider>
            <Layout>
              <header className="top">
                <Space size="middle" wrap={false}>
                  <Typography.Text className="who">
                    {t('signedInAs')} <strong>{operator.operatorId}</strong> ({operator.role})
                  </Typography.Text>
                  {languageButton}
                  <Button onClick={signOut}>{t('signOut')}</Button>
                </Space>
              </header>
              <main id="main" tabIndex={-1} key={route.path.join('/')}>
                {page(route)}
              </main>
            </Layout>
          </Layout>
        </OperatorContext.Provider>
      )}
    </ConfigProvider>
  );
}

/**
 * Where Ant Design's CSS-in-JS would insert its <style> elements at run time: an element never
 * attached to the document. Even in zero-runtime mode antd still registers its CSS variables as
 * <style> elements, which the CSP (style-src 'self') refuses; the stylesheet extracted at build
 * time already holds those variables, for the same theme, so nothing is lost.
 */
const DETACHED_STYLES = document.createElement('div');

setLang(lang());
dayjs.locale(lang() === 'zh' ? 'zh-cn' : 'en');
createRoot(document.getElementById('app')!).render(
  <StrictMode>
    <StyleProvider container={DETACHED_STYLES}>
      <App />
    </StyleProvider>
  </StrictMode>,
);
