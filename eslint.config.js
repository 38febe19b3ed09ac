import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'coverage/**', '.tap/**', '.scratch/**']
  }),
  {
    rules: {
      // `void promise` marks a promise that is deliberately not awaited (a server started or stopped in the background).
      'no-void': ['error', { allowAsStatement: true }]
    }
  }
]
