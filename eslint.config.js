import neostandard from 'neostandard'

// Lines up to 140 characters. Template literals (SQL, messages built from values),
// regular expressions and URLs may run longer; so may strings in tests (exact
// bodies) and the prose of the benchmark goals and the README's demo examples.
const maxLength = { code: 140, ignoreUrls: true, ignoreRegExpLiterals: true, ignoreTemplateLiterals: true }

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'coverage/**', '.tap/**', '.scratch/**']
  }),
  {
    rules: {
      // `void promise` marks a promise that is deliberately not awaited (a server started or stopped in the background).
      'no-void': ['error', { allowAsStatement: true }],
      '@stylistic/max-len': ['error', maxLength]
    }
  },
  {
    files: ['test/**', 'benchmarks/goals.ts', 'demo/readme-examples.ts'],
    rules: {
      '@stylistic/max-len': ['error', { ...maxLength, ignoreStrings: true }]
    }
  }
]
