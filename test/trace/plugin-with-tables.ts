// The plugin, the tables' resources and the dialects from one module graph: what no-subscriber.test.ts loads with its
// counting mocks (a second copy of the plugin's modules beside the test's own would watch the same routes).
export { default as expandPlugin } from '../../plugin/index.js'
export { Pet, openSeeded, resources } from '../fixtures/tables.js'
export { dialects } from '../fixtures/dialects.js'
