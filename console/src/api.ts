/**
 * The admin API, called with the operator's token as a bearer token. The token lives in this tab's
 * sessionStorage only: never in a URL, a cookie or localStorage, gone when the tab closes.
 */
const TOKEN_KEY = 'pcs-console-token';
const TIMEOUT_MS = 15_000;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

let onUnauthenticated: () => void = () => undefined;
export function whenUnauthenticated(handler: () => void): void {
  onUnauthenticated = handler;
}

export async function api<T>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${session.token() ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new ApiError(0, (error as Error).message);
  }
  const text = await response.text();
  const json = text ? safeJson(text) : null;
  if (response.status === 401) onUnauthenticated();
  if (!response.ok) throw new ApiError(response.status, errorMessage(json, response.statusText));
  return json as T;
}

export const get = <T>(path: string): Promise<T> => api<T>('GET', path);
export const post = <T>(path: string, body: unknown = {}): Promise<T> => api<T>('POST', path, body);
export const put = <T>(path: string, body: unknown): Promise<T> => api<T>('PUT', path, body);
export const patch = <T>(path: string, body: unknown): Promise<T> => api<T>('PATCH', path, body);

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function errorMessage(json: unknown, fallback: string): string {
  const message = (json as { message?: unknown } | null)?.message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : fallback;
}

/**
 * A file from the admin API (a CSV export), saved by the browser under the name the server gives:
 * fetched with the bearer token like every call, so it cannot be a plain link.
 */
export async function download(path: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(path, {
      headers: { authorization: `Bearer ${session.token() ?? ''}` },
      credentials: 'omit',
      cache: 'no-store',
      signal: AbortSignal.timeout(TIMEOUT_MS * 4),
    });
  } catch (error) {
    throw new ApiError(0, (error as Error).message);
  }
  if (response.status === 401) onUnauthenticated();
  if (!response.ok) {
    const text = await response.text();
    throw new ApiError(response.status, errorMessage(text ? safeJson(text) : null, response.statusText));
  }
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'download';
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: name });
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}

/** `?a=1&b=2` without the empty ones. */
export function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}
