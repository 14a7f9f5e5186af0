/**
 * The shop emulator's memory, one per SandboxContext (so two emulators in one test process never
 * share files, searches or quotas), created on first use.
 */
import type { SandboxContext } from '../context';
import { assetUrl } from './assets';
import { Catalog } from './catalog';
import { ShopFiles } from './files';
import { MusicLibrary } from './music';
import { Prechecks } from './precheck';
import { ShopVideos } from './videos';

export interface ShopState {
  files: ShopFiles;
  catalog: Catalog;
  music: MusicLibrary;
  prechecks: Prechecks;
  videos: ShopVideos;
}

const states = new WeakMap<SandboxContext, ShopState>();

export function shopState(ctx: SandboxContext): ShopState {
  let state = states.get(ctx);
  if (!state) {
    const now = () => ctx.clock.now();
    const processingMs = () => ctx.settings.publishProcessingMs;
    state = {
      files: new ShopFiles(now),
      catalog: new Catalog((id) => assetUrl(ctx, 'products', `${id}.svg`)),
      music: new MusicLibrary(now, {
        cover: (id) => assetUrl(ctx, 'covers', `${id}.svg`),
        play: (id) => assetUrl(ctx, 'music', `${id}.wav`),
      }),
      prechecks: new Prechecks(now, processingMs),
      videos: new ShopVideos({ now, processingMs, after: (ms, fire) => ctx.clock.after(ms, fire), addPost: (post) => ctx.posts.add(post) }),
    };
    states.set(ctx, state);
  }
  return state;
}
