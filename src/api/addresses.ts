// Where the three hosts of a tenant live.
// The spec gives the base-host scheme; the settings-host and auth-host names are ferry's
// documented choices (docs/emulator.md, x-ferry-choice in the contract) and can always be
// overridden with explicit URLs.
import { ConfigurationError } from './errors.js';

export const REGIONS = ['uk', 'us', 'eu', 'au', 'jp'] as const;
export type Region = (typeof REGIONS)[number];

/** Regions whose token endpoint the spec confirms; au and jp need an explicit auth URL. */
const REGIONS_WITH_KNOWN_AUTH: readonly Region[] = ['uk', 'us', 'eu'];

export interface TenantAddress {
  tenant: string;
  region: string;
  domain: string;
  /** Required for au and jp; optional elsewhere. */
  authUrl?: string | undefined;
}

export interface ExplicitAddress {
  baseUrl: string;
  settingsUrl: string;
  authUrl: string;
}

export type AddressInput = TenantAddress | ExplicitAddress;

export interface ResolvedAddress {
  baseUrl: string;
  settingsUrl: string;
  authUrl: string;
}

export function resolveAddress(input: AddressInput): ResolvedAddress {
  if ('baseUrl' in input) {
    return {
      baseUrl: checkUrl('baseUrl', input.baseUrl),
      settingsUrl: checkUrl('settingsUrl', input.settingsUrl),
      authUrl: checkUrl('authUrl', input.authUrl),
    };
  }
  const { tenant, region, domain } = input;
  if (!isRegion(region)) {
    throw new ConfigurationError(`unknown region "${region}": expected one of ${REGIONS.join(', ')}`);
  }
  if (!/^[a-z0-9][a-z0-9-]*$/i.test(tenant)) {
    throw new ConfigurationError(`tenant "${tenant}" is not a valid host label (letters, digits and hyphens)`);
  }
  if (!/^[a-z0-9.-]+\.[a-z]{2,}$/i.test(domain)) {
    throw new ConfigurationError(`domain "${domain}" is not a valid domain name`);
  }
  let authUrl = input.authUrl;
  if (!authUrl) {
    if (!REGIONS_WITH_KNOWN_AUTH.includes(region)) {
      throw new ConfigurationError(
        `region "${region}" has no known token endpoint: set the auth URL explicitly (FERRY_AUTH_URL or authUrl in the profile)`,
      );
    }
    authUrl = `https://auth.${region}.${domain}`;
  }
  return {
    baseUrl: `https://api.${tenant}.${region}.${domain}`,
    settingsUrl: `https://settings.${tenant}.${region}.${domain}`,
    authUrl: checkUrl('authUrl', authUrl),
  };
}

export function isRegion(value: string): value is Region {
  return (REGIONS as readonly string[]).includes(value);
}

function checkUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigurationError(`${name} is not a valid URL`);
  }
  // Said as shownUrl shows it: a password or a token in the value is in no message.
  const shown = shownUrl(value);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigurationError(`${name} "${shown}" must use https (or http for a local emulator)`);
  }
  if (url.username || url.password) {
    throw new ConfigurationError(`${name} "${shown}": credentials in the URL are not sent; the service is signed in to with the client id and secret`);
  }
  if (url.search || url.hash) {
    throw new ConfigurationError(`${name} "${shown}" must not carry a query string or fragment`);
  }
  // No trailing slash, so paths can be appended as-is.
  return url.href.replace(/\/+$/, '');
}

/**
 * A URL as ferry shows it anywhere (a summary, a log line, an error, `config show`, `doctor`): its
 * credentials (`user:password@`) replaced by `***@`, each query value by `…` (tokens travel
 * there too), and, with `path: false`, the path too (a ping URL's path is its secret). The one
 * owner of that rule: every URL passes here before it is shown. Text that is no URL is not shown.
 */
export function shownUrl(raw: string | URL, opts: { path?: boolean } = {}): string {
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    return '(not a URL)';
  }
  const who = url.username || url.password ? '***@' : '';
  // A root path is shown as it was written (`https://host` or `https://host/`).
  const bare = url.pathname === '/' && !String(raw).replace(/[?#].*$/, '').endsWith('/');
  const path = opts.path === false ? (url.pathname === '/' ? '' : '/…') : bare ? '' : url.pathname;
  const query = url.search ? `?${[...url.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=…`).join('&')}` : '';
  return `${url.protocol}//${who}${url.host}${path}${query}`;
}

/** Every URL inside a message (an error's words) as shownUrl shows it. */
export function redactUrls(text: string): string {
  // A sentence's closing mark after the URL is the sentence's, not the URL's.
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)]+/gi, (match) => {
    const url = match.replace(/[.,;:!?]+$/, '');
    return shownUrl(url) + match.slice(url.length);
  });
}

/** This machine: a secret sent here over http crosses no network. */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The addresses (as shown) that are plain http to a host that is not this machine. */
export function plainHttpHosts(address: ResolvedAddress): string[] {
  return [...new Set([address.baseUrl, address.settingsUrl, address.authUrl].filter((u) => {
    const url = new URL(u);
    return url.protocol === 'http:' && !isLoopback(url.hostname);
  }).map((u) => shownUrl(u)))];
}
