#!/bin/sh
# The production build, exactly as the image makes it and as .ci/run tests it
# (test/production-build.e2e-spec.ts runs this script on a copy of what the Dockerfile copies):
# every dependency to compile, then only the production ones are kept. A package that production
# code imports but package-lock.json marks as a development dependency is gone after the prune,
# and the build then fails its start-up check instead of the user's deployment.
set -eu
npm ci --no-audit --no-fund
npm run build
npm prune --omit=dev --no-audit --no-fund
# What the prune keeps and the running service never loads:
# - ts-node (and what only it needs) and typescript, optional peers of typeorm's ts-node CLI and of
#   @nestjs/swagger's compiler plugin, which npm keeps when it finds them installed; nothing the
#   service requires reaches either (the production-build test starts the tree without them).
#   npm takes ts-node and its own dependencies; it keeps an optional peer it finds, so typescript
#   goes by hand.
# - @types/*, declarations only, and @microsoft/tsdoc, which only that compiler plugin loads.
# node_modules: 209 MB after the prune, 177 MB after this (du -sh, Node 24, December 2026).
npm uninstall --no-save --omit=dev --no-audit --no-fund ts-node
rm -rf node_modules/typescript node_modules/@types node_modules/@microsoft
