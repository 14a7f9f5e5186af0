/**
 * The account's publish settings (privacy levels it may use, longest video it may post), read from
 * the official video/settings endpoint and kept briefly per account, so a burst of publishes costs
 * one lookup. Used to refuse a publish the platform would refuse later, while the caller waits,
 * with a message that says what is allowed.
 */
import type { Upstream } from '../upstream';
import { getVideoSettings, type VideoSettingsResponse } from '../upstream/vplat/publishing';

/** Settings change rarely (an account going private); a minute of staleness is harmless. */
export const ACCOUNT_SETTINGS_TTL_MS = 60_000;
/** Bounds the cache: the oldest entries go first. */
const MAX_ENTRIES = 10_000;

export class AccountSettingsCache {
  private readonly entries = new Map<string, { at: number; settings: VideoSettingsResponse }>();

  constructor(
    private readonly upstream: Upstream,
    private readonly ttlMs = ACCOUNT_SETTINGS_TTL_MS,
  ) {}

  async get(businessId: string, accessToken: string, now = Date.now()): Promise<VideoSettingsResponse> {
    const hit = this.entries.get(businessId);
    if (hit && now - hit.at < this.ttlMs) return hit.settings;
    const settings = await getVideoSettings(this.upstream.vplat, accessToken, { business_id: businessId });
    this.entries.delete(businessId);
    this.entries.set(businessId, { at: now, settings });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return settings;
  }
}
