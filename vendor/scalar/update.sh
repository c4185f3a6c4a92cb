#!/usr/bin/env bash
# Refreshes vendor/scalar/standalone.js, the one file of Scalar's API reference that GET /docs/scalar.js serves,
# from the published package (the whole package is a Vue application of about 295 installed packages; the
# service needs only its self-contained browser bundle). Usage: bash vendor/scalar/update.sh 1.72.1
# npm pack checks the tarball against the registry's integrity; source.json records it and the file's sha256,
# which test/docs/scalar-vendor.test.ts checks.
set -euo pipefail
version="${1:?usage: update.sh <@scalar/api-reference version>}"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
integrity="$(npm view "@scalar/api-reference@$version" dist.integrity)"
npm pack --silent "@scalar/api-reference@$version" >/dev/null
tar xzf "scalar-api-reference-$version.tgz" package/dist/browser/standalone.js
cp package/dist/browser/standalone.js "$here/standalone.js"
sha="$(sha256sum "$here/standalone.js" | cut -d' ' -f1)"
cat >"$here/source.json" <<JSON
{
  "package": "@scalar/api-reference",
  "version": "$version",
  "file": "dist/browser/standalone.js",
  "tarballIntegrity": "$integrity",
  "sha256": "$sha"
}
JSON
echo "vendor/scalar/standalone.js: @scalar/api-reference@$version, sha256 $sha"
