/**
 * The direction of the house (../shared/STYLE.md, "The direction of the house"): arrows point down.
 *
 *   cli, bench, drills            → sdk, and whatever they start
 *   gateway                       → core → config
 *   worker (composition root)     → activities → core
 *   workflows                     → only @temporalio/workflow, @temporalio/common and workflows/shared.ts
 *   sandbox (the emulator)        → may use core's pure modules; only the places that start it import it
 *
 * Where a lower room needs a type from a higher one, the type moves down. `npm run lint:deps` checks
 * these rules; .ci/run runs it before the tests.
 */
const OURS = '^(gen|config|core|gateway|workflows|activities|worker|sandbox|cli|sdk|console|test|bench|drills|scripts)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules cannot be read, tested or moved apart; break it by moving the shared part down.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-stays-below',
      severity: 'error',
      comment:
        'core is the rules of the service: it never reaches up into the emulator, the activities, the worker, the CLI or the gateway.',
      from: { path: '^core/' },
      to: { path: '^(sandbox|activities|worker|cli|gateway|console|sdk|bench|drills|test)/' },
    },
    {
      name: 'workflows-import-only-workflow-code',
      severity: 'error',
      comment:
        "Workflow code is replayed deterministically in Temporal's sandbox: it imports workflow packages and workflows/ only. " +
        'Activities are imported as types, for proxyActivities, and erased from the bundle.',
      from: { path: '^workflows/' },
      to: {
        pathNot: ['^workflows/', '^node_modules/@temporalio/(workflow|common)/'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'workflows-types-only-from-activities',
      severity: 'error',
      comment: "Beyond workflows/, a workflow may name only the activities' types.",
      from: { path: '^workflows/' },
      to: { path: OURS, pathNot: ['^workflows/', '^activities/'] },
    },
    {
      name: 'workflow-code-only-in-the-worker',
      severity: 'error',
      comment:
        "Workflow code runs in the worker's bundle only; everyone else starts workflows by the inputs, outputs and ids of workflows/shared.ts and workflows/workflow-ids.ts.",
      from: { path: '^(core|activities|gateway|sandbox|cli|sdk)/' },
      to: { path: '^workflows/', pathNot: '^workflows/(shared|workflow-ids)\\.ts$' },
    },
    {
      name: 'gateway-goes-through-core',
      severity: 'error',
      comment: "The gateway shapes HTTP; every rule, every row and every upstream call is core's, reached through its Connect services.",
      from: { path: '^gateway/' },
      to: { path: '^(core/db|core/upstream|activities|workflows|worker|sandbox)/' },
    },
    {
      name: 'activities-stay-below-the-edges',
      severity: 'error',
      comment:
        "Activities are side effects on core's behalf: they never reach the gateway, the CLI, the worker that hosts them or the emulator.",
      from: { path: '^activities/' },
      to: { path: '^(gateway|cli|worker|sandbox|console|sdk)/' },
    },
    {
      name: 'sandbox-only-from-its-starters',
      severity: 'error',
      comment: 'The emulator stands in for the official platforms: only what starts it (the CLI, tests, benchmarks, drills) may import it.',
      from: { pathNot: '^(sandbox|cli|test|bench|drills|scripts)/' },
      to: { path: '^sandbox/' },
    },
    {
      name: 'sdk-is-a-client',
      severity: 'error',
      comment:
        'The SDK is a package integrators install without the service: it imports nothing outside sdk/, not even types. ' +
        "The API's shapes are sdk/api-types.ts, generated from the gateway's schemas (scripts/sdk-api-types.ts).",
      from: { path: '^sdk/' },
      to: { path: OURS, pathNot: '^sdk/' },
    },
    {
      name: 'sdk-has-no-dependencies',
      severity: 'error',
      comment: 'The SDK package has no dependencies of its own to install: Node.js built-ins only.',
      from: { path: '^sdk/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|test-artifacts|console/dist|gen/.*_pb\\.d\\.ts$)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.cjs', '.mjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
