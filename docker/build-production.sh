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
