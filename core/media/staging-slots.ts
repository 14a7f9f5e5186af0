/**
 * Page-aligned memory for the folder store's direct writes (O_DIRECT), which take their bytes from
 * memory aligned to the disk's blocks. Node gives no aligned allocation, but a WebAssembly memory
 * starts on a page boundary, so every slot carved from one at a multiple of DIRECT_ALIGN is
 * aligned. The memory is shared, so the hashing thread reads a slot where it lies (sha256-thread.ts)
 * rather than from a copy or from the file.
 *
 * One memory serves the process, made on first use. A write holds one ring of SLOTS_PER_RING slots
 * while it runs; when every ring is taken, the next write goes through the page cache instead
 * (folder-sink.ts), so the memory, and what it adds to the resident size once used, stays bounded.
 */

/** Alignment of a direct write's memory, file offset and length: a page, which covers disks of 512-byte and 4 KiB blocks. */
export const DIRECT_ALIGN = 4096;

/** Bytes per slot: one write to the disk, one message to the hashing thread. */
export const SLOT_BYTES = 2 * 1024 * 1024;

/** Slots per write: one being filled while the others are written and hashed. */
export const SLOTS_PER_RING = 4;

/** Direct writes at once in a process (8 MiB each); more go through the page cache. */
export const RINGS_PER_PROCESS = 8;

const WASM_PAGE_BYTES = 64 * 1024;

/** The one part of WebAssembly used here; the type libraries this project compiles with do not declare it. */
declare const WebAssembly: {
  Memory: new (descriptor: { initial: number; maximum: number; shared: true }) => { readonly buffer: SharedArrayBuffer };
};

export interface StagingSlot {
  /** The shared memory the slot lies in, and its offset there, for the hashing thread. */
  readonly memory: SharedArrayBuffer;
  readonly offset: number;
  /** The slot's bytes, page-aligned. */
  readonly bytes: Buffer;
}

export interface StagingRing {
  readonly slots: readonly StagingSlot[];
  /** Gives the ring back; its slots must no longer be read or written. */
  release(): void;
}

let memory: SharedArrayBuffer | undefined;
/** Why this process cannot make the memory (run with --jitless, which has no WebAssembly, or out of address space). */
let memoryProblem: string | undefined;
const freeRings: StagingSlot[][] = [];

/** Why there are no slots in this process, or undefined when there are: the memory is made here on first use. */
export function stagingProblem(): string | undefined {
  if (memory || memoryProblem) return memoryProblem;
  try {
    const pages = (RINGS_PER_PROCESS * SLOTS_PER_RING * SLOT_BYTES) / WASM_PAGE_BYTES;
    memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true }).buffer;
  } catch (err) {
    memoryProblem = (err as Error).message;
    return memoryProblem;
  }
  for (let ring = 0; ring < RINGS_PER_PROCESS; ring++) {
    const slots: StagingSlot[] = [];
    for (let slot = 0; slot < SLOTS_PER_RING; slot++) {
      const offset = (ring * SLOTS_PER_RING + slot) * SLOT_BYTES;
      slots.push({ memory, offset, bytes: Buffer.from(memory, offset, SLOT_BYTES) });
    }
    freeRings.push(slots);
  }
  return undefined;
}

/** A free ring, or undefined when all are taken or there are none. */
export function takeRing(): StagingRing | undefined {
  if (stagingProblem()) return undefined;
  const slots = freeRings.pop();
  if (!slots) return undefined;
  let released = false;
  return {
    slots,
    release() {
      if (released) return;
      released = true;
      freeRings.push(slots);
    },
  };
}

export const alignDown = (n: number) => n - (n % DIRECT_ALIGN);
export const alignUp = (n: number) => alignDown(n + DIRECT_ALIGN - 1);
