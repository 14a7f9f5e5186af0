#!/usr/bin/env node
// Builds and keeps the workflow bundle a worker reuses between starts (worker/workflow-bundle.ts),
// so that an image whose node_modules the service cannot write still starts its workers without
// bundling. Run from the repository root once the dependencies are installed; fails if it cannot
// keep the bundle.
'use strict';
const path = require('node:path');

require('tsx/cjs/api').register();
const { WORKER_WORKFLOWS, workflowBundle } = require(path.join(__dirname, '..', 'worker', 'workflow-bundle.ts'));
const { createLogger } = require(path.join(__dirname, '..', 'core', 'logger.ts'));

workflowBundle(WORKER_WORKFLOWS, { logger: createLogger('info', 'build') }).then(
  ({ keptIn }) => {
    if (!keptIn) process.exit(1);
    process.stdout.write(`workflow bundle kept in ${keptIn}\n`);
  },
  (err) => {
    process.stderr.write(`prebuild-workflows: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
