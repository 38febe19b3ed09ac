#!/usr/bin/env node
// The package's bin: `npx fastify-expand pull --database-url … --out …` (cli.ts).
import { pull } from './cli.js'

process.exitCode = await pull(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
})
