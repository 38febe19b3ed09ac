#!/usr/bin/env bash
# Packs the repository (prepack builds dist/), installs the tarball in a
# scratch project under /tmp with only the peers a user installs (at the
# lockfile's versions), then runs an ESM smoke test and a strict TypeScript
# consumer check against the shipped files; a second project has TypeBox 1.x
# (`typebox`) instead of @sinclair/typebox and checks its own consumer.
# Exits non-zero on any failure.
#
# better-sqlite3 is not compiled a second time: it is installed from the
# registry with install scripts off, and the native module this repository's
# `npm ci` built for the same Node binary is copied into it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/fastify-expand-pack.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
start=$(date +%s)

locked () { node -e "process.stdout.write(require('$repo/package-lock.json').packages['node_modules/$1'].version)"; }

cd "$repo"
tarball=$(npm pack --silent --pack-destination "$scratch" | tail -n 1)
echo "packed $tarball"
tar -tzf "$scratch/$tarball" | sed 's|^package/||' > "$scratch/contents.txt"
for required in package.json README.md dist/plugin/index.js dist/plugin/index.d.ts dist/plugin/index.js.map; do
  grep -qx "$required" "$scratch/contents.txt" || { echo "the package lacks $required"; exit 1; }
done
if grep -E '^(plugin|test|demo|benchmarks|schemas)/|\.test\.' "$scratch/contents.txt"; then echo "the package ships files a user does not need"; exit 1; fi

app="$scratch/app"
mkdir -p "$app"
cp "$repo/.ci/pack/smoke.mjs" "$repo/.ci/pack/consumer.ts" "$app/"
cat > "$app/package.json" <<JSON
{ "name": "fastify-expand-consumer", "private": true, "type": "module" }
JSON
cat > "$app/tsconfig.json" <<JSON
{
  "compilerOptions": {
    "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
    "strict": true, "noEmit": true, "skipLibCheck": false, "types": ["node"]
  },
  "files": ["consumer.ts"]
}
JSON
cd "$app"
npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
  "$scratch/$tarball" \
  "fastify@$(locked fastify)" "@sinclair/typebox@$(locked @sinclair/typebox)" "kysely@$(locked kysely)" \
  "better-sqlite3@$(locked better-sqlite3)" \
  "@types/better-sqlite3@$(locked @types/better-sqlite3)" "@types/node@$(locked @types/node)"
mkdir -p node_modules/better-sqlite3/build/Release
cp "$repo/node_modules/better-sqlite3/build/Release/better_sqlite3.node" node_modules/better-sqlite3/build/Release/
[ -f node_modules/fastify-expand/dist/plugin/index.js ] || { echo "fastify-expand is not installed in the scratch project"; exit 1; }

node smoke.mjs
"$repo/node_modules/.bin/tsc" -p tsconfig.json
echo "pack consumer type check: ok"

typebox1="$scratch/typebox1"
mkdir -p "$typebox1"
cp "$repo/.ci/pack/consumer-typebox1.ts" "$typebox1/"
# A fresh package.json: the first project's now lists what was installed there.
cat > "$typebox1/package.json" <<JSON
{ "name": "fastify-expand-consumer-typebox1", "private": true, "type": "module" }
JSON
sed 's/"consumer.ts"/"consumer-typebox1.ts"/' "$app/tsconfig.json" > "$typebox1/tsconfig.json"
cd "$typebox1"
npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
  "$scratch/$tarball" \
  "fastify@$(locked fastify)" "typebox@$(locked typebox)" "kysely@$(locked kysely)" "@types/node@$(locked @types/node)"
[ ! -e node_modules/@sinclair/typebox ] || { echo "@sinclair/typebox is installed in the TypeBox 1.x project"; exit 1; }
"$repo/node_modules/.bin/tsc" -p tsconfig.json
echo "pack consumer type check with TypeBox 1.x: ok"
echo "pack check took $(( $(date +%s) - start )) s"
