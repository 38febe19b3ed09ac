#!/usr/bin/env bash
# Packs the repository (prepack builds dist/), installs the tarball in a
# scratch project under /tmp with only the peers a user installs, then runs an
# ESM smoke test and a strict TypeScript consumer check against the shipped
# files, and the `./otel` entry's smoke test with @opentelemetry/api; a
# second project has TypeBox 1.x (`typebox`) instead of @sinclair/typebox and
# no @opentelemetry/api, where the main entry must load, and checks its own consumer.
#
# The peers are the newest release of each line package.json supports, as a
# user installing today gets them: fastify 5, @sinclair/typebox 0.34,
# typebox 1, and one Kysely line per run, given as the first argument (0.28
# or 0.29; by default 0.29 on Node 22 and later, 0.28 before: Kysely 0.29
# needs Node 22). .ci/run checks 0.28 on Node 20 and 0.29 on Node 22.
# Exits non-zero on any failure.
#
# better-sqlite3 is not compiled a second time: the version this repository's
# node_modules holds for the running Node binary is installed from the
# registry with install scripts off, and its native module (12's, built by
# `npm ci` or by .ci/run for that binary) is copied into it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/fastify-expand-pack.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
start=$(date +%s)

locked () { node -e "process.stdout.write(require('$repo/package-lock.json').packages['node_modules/$1'].version)"; }
# The newest release in a range (releases only, compared as numbers), from the registry.
newest () {
  npm view "$1@$2" version --json | node -e '
    const found = [].concat(JSON.parse(require("fs").readFileSync(0, "utf8"))).filter((v) => /^\d+\.\d+\.\d+$/.test(v))
    const parts = (v) => v.split(".").map(Number)
    found.sort((a, b) => { const [x, y] = [parts(a), parts(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] })
    if (found.length === 0) process.exit(1)
    process.stdout.write(found.at(-1))'
}
node_major=$(node -p 'process.versions.node.split(".")[0]')
kysely_line=${1:-$([ "$node_major" -ge 22 ] && echo 0.29 || echo 0.28)}
case $kysely_line in
  0.28) ;;
  0.29) [ "$node_major" -ge 22 ] || { echo "Kysely 0.29 needs Node 22 or later, this is Node $node_major"; exit 1; } ;;
  *) echo "unknown Kysely line $kysely_line (0.28 or 0.29)"; exit 1 ;;
esac
# Every line must be one package.json supports.
node -e "
  const peers = require('$repo/package.json').peerDependencies
  const want = { kysely: '^$kysely_line.0', fastify: '^5.0.0', '@sinclair/typebox': '^0.34.0', typebox: '^1.0.0' }
  for (const [name, range] of Object.entries(want)) {
    if (!peers[name].split(' || ').includes(range)) { console.error(name + ' ' + range + ' is not in the peer range ' + peers[name]); process.exit(1) }
  }"
kysely=$(newest kysely "~$kysely_line.0")
fastify=$(newest fastify '^5.0.0')
sinclair=$(newest @sinclair/typebox '~0.34.0')
typebox=$(newest typebox '^1.0.0')
echo "peers: kysely $kysely, fastify $fastify, @sinclair/typebox $sinclair, typebox $typebox (Node $(node --version))"
# What npm installed is what was asked for.
installed () {
  local name version
  for pair in "$@"; do
    name=${pair%@*}; version=${pair##*@}
    [ "$(node -p "require('./node_modules/$name/package.json').version")" = "$version" ] || { echo "$name $version was not installed"; exit 1; }
  done
}

cd "$repo"
tarball=$(npm pack --silent --pack-destination "$scratch" | tail -n 1)
echo "packed $tarball"
tar -tzf "$scratch/$tarball" | sed 's|^package/||' > "$scratch/contents.txt"
for required in package.json README.md CHANGELOG.md docs/README.md docs/errors.md dist/plugin/index.js dist/plugin/index.d.ts dist/plugin/index.js.map \
  dist/plugin/otel/index.js dist/plugin/otel/index.d.ts dist/plugin/pull/bin.js; do
  grep -qx "$required" "$scratch/contents.txt" || { echo "the package lacks $required"; exit 1; }
done
if grep -E '^(plugin|test|demo|benchmarks|schemas)/|\.test\.' "$scratch/contents.txt"; then echo "the package ships files a user does not need"; exit 1; fi
# @opentelemetry/api is an optional peer: only the `./otel` entry's files may import it.
mkdir "$scratch/unpacked" && tar -xzf "$scratch/$tarball" -C "$scratch/unpacked"
if (cd "$scratch/unpacked/package" && grep -rl --include='*.js' '@opentelemetry' dist/plugin | grep -v '^dist/plugin/otel/'); then
  echo "a file outside dist/plugin/otel imports @opentelemetry"; exit 1
fi

app="$scratch/app"
mkdir -p "$app"
cp "$repo/.ci/pack/smoke.mjs" "$repo/.ci/pack/otel-smoke.mjs" "$repo/.ci/pack/people-app.mjs" "$repo/.ci/pack/consumer.ts" "$app/"
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
  "fastify@$fastify" "@sinclair/typebox@$sinclair" "kysely@$kysely" \
  "better-sqlite3@$(node -p "require('$repo/node_modules/better-sqlite3/package.json').version")" \
  "@types/better-sqlite3@$(locked @types/better-sqlite3)" "@types/node@$(locked @types/node)" \
  "@opentelemetry/api@$(locked @opentelemetry/api)" "@opentelemetry/sdk-trace-base@$(locked @opentelemetry/sdk-trace-base)" \
  "@opentelemetry/context-async-hooks@$(locked @opentelemetry/context-async-hooks)"
# better-sqlite3 13 ships prebuilt modules for every platform; 12 has the one built here.
native="$repo/node_modules/better-sqlite3/build/Release/better_sqlite3.node"
if [ -f "$native" ]; then
  mkdir -p node_modules/better-sqlite3/build/Release && cp "$native" node_modules/better-sqlite3/build/Release/
fi
[ -f node_modules/fastify-expand/dist/plugin/index.js ] || { echo "fastify-expand is not installed in the scratch project"; exit 1; }
installed "fastify@$fastify" "@sinclair/typebox@$sinclair" "kysely@$kysely"

node smoke.mjs
node otel-smoke.mjs
# The bin `npx fastify-expand pull` runs: installed as the package's bin, its usage printed.
usage=$(./node_modules/.bin/fastify-expand --help)
[[ $usage == "Usage: fastify-expand pull"* ]] || { echo "the bin fastify-expand does not run"; exit 1; }
"$repo/node_modules/.bin/tsc" -p tsconfig.json
echo "pack consumer type check (kysely $kysely): ok"

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
  "fastify@$fastify" "typebox@$typebox" "kysely@$kysely" "@types/node@$(locked @types/node)"
installed "fastify@$fastify" "typebox@$typebox" "kysely@$kysely"
[ ! -e node_modules/@sinclair/typebox ] || { echo "@sinclair/typebox is installed in the TypeBox 1.x project"; exit 1; }
# Without the optional @opentelemetry/api: the main entry loads, the `./otel` entry says what it lacks.
[ ! -e node_modules/@opentelemetry/api ] || { echo "@opentelemetry/api is installed in the TypeBox 1.x project"; exit 1; }
node --input-type=module -e "
  const plugin = await import('fastify-expand')
  if (typeof plugin.default !== 'function') throw new Error('the main entry has no plugin')
  await import('fastify-expand/otel').then(() => { throw new Error('fastify-expand/otel loaded without @opentelemetry/api') },
    (error) => { if (error.code !== 'ERR_MODULE_NOT_FOUND' || !error.message.includes('@opentelemetry/api')) throw error })"
echo "main entry without @opentelemetry/api: ok"
"$repo/node_modules/.bin/tsc" -p tsconfig.json
echo "pack consumer type check with TypeBox 1.x (kysely $kysely): ok"
echo "pack check took $(( $(date +%s) - start )) s"
