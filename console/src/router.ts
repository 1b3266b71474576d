import { useEffect, useState } from 'react';

export interface Route {
  path: string[];
  params: URLSearchParams;
}

/** `#/orders/ABC?x=1` → { path: ['orders', 'ABC'], params: x=1 }. Hash routes: the server serves one page. */
export function parseRoute(hash: string): Route {
  const [path, search] = hash.replace(/^#\/?/, '').split('?');
  return {
    path: path.split('/').filter(Boolean).map(decodeURIComponent),
    params: new URLSearchParams(search ?? ''),
  };
}

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return parseRoute(hash);
}

export function navigate(hash: string): void {
  location.hash = hash;
}
