/**
 * Where the account's access token may go besides the Business API: the platform's message media
 * download address is an answer of the platform, fetched with the token in `x-user`, so a forged,
 * proxied or compromised answer naming another host would hand that host the token. The address
 * must be on the API's own origin (where the token goes anyway; the emulator serves its links
 * there) or be https on one of the platform's media hosts (VPLAT_MEDIA_HOSTS).
 */

export interface PlatformHosts {
  /** Origin of the Business API (VPLAT_API_BASE, or the emulator's). */
  apiBase: string;
  /** Exact host names, or `*.` and a domain for its subdomains. */
  mediaHosts: readonly string[];
}

/** Why the token must not go to `address`, or undefined when it may. */
export function mediaAddressRefusal(address: string, platform: PlatformHosts): string | undefined {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return 'it is not an absolute URL';
  }
  if (url.username || url.password) return 'it carries credentials';
  if (url.origin === new URL(platform.apiBase).origin) return undefined;
  if (url.protocol !== 'https:') return `it is not https (${url.protocol.replace(/:$/, '')})`;
  // A name with its root dot is the same name.
  const host = url.hostname.replace(/\.$/, '');
  if (!platform.mediaHosts.some((pattern) => hostMatches(pattern, host))) return `its host ${host} is not one of the platform's`;
  return undefined;
}

function hostMatches(pattern: string, host: string): boolean {
  return pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) : host === pattern;
}
