// The tenant a command writes to, named for summaries (light: no client is loaded to name one).

/** The tenant a command writes to (or reads from), never a secret. */
export interface Target {
  host: string;
  clientId: string;
  profile?: string;
  /** Addresses reached over plain http to another machine, allowed by --allow-http: said wherever the target is. */
  plainHttp?: string[];
}

export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** One line naming a target: `host, client id, profile`. */
export function describeTarget(t: Target): string {
  return `${t.host}, client ${t.clientId}${t.profile ? `, profile ${t.profile}` : ''}${t.plainHttp?.length ? `, plain http to ${t.plainHttp.join(', ')} (--allow-http: the secret and tokens cross the network in clear)` : ''}`;
}
