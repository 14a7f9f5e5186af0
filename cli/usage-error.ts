/** A mistake in the command line: reported in one line and exit code 2, without a stack. */
export class UsageError extends Error {}
