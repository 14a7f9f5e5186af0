/** Exit codes of `vps`, so scripts can tell what went wrong without parsing text. */
export const EXIT = {
  ok: 0,
  /** The API answered with a non-zero code (printed on stderr). */
  apiError: 1,
  /** Bad flags or arguments. */
  usage: 2,
  /** The service could not be reached. */
  network: 3,
  /**
   * `vps status` or `publish --wait` ran out of attempts before a terminal status; `vps trigger`
   * ran out of time before the service recorded the event.
   */
  notTerminal: 4,
  /** `vps trigger`: the service is not backed by a sandbox emulator this command can reach (production has none). */
  noEmulator: 5,
} as const;
