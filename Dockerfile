# One image for every role; the role is chosen by the command (vps serve --role …).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# buf and the protobuf plugin are build tools: generate, then drop the development dependencies.
RUN npx --no-install buf generate && npm prune --omit=dev
ENV NODE_ENV=production
USER node
ENTRYPOINT ["node", "bin/vps"]
CMD ["serve", "--role", "gateway"]
