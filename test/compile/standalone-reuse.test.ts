import t from 'tap'
import { createSerializer } from '../../plugin/index.js'
import { Pet, resources } from '../fixtures/pets.js'

t.test('createSerializer reuses the plan of a repeated combination instead of planning it again', async (t) => {
  const first = createSerializer(Pet, { expand: 'owner', resources })
  const again = createSerializer(Pet, { expand: ['owner'], resources })
  const asList = createSerializer(Pet, { expand: 'owner', resources, list: true })
  const permitted = createSerializer(Pet, { expand: 'owner', resources, permittedExpands: ['owner'] })
  t.equal(again.expansion, first.expansion, 'same resource, options and query: the same plan object')
  t.equal(again.stringify, first.stringify)
  t.not(asList.expansion, first.expansion, 'a list is another target')
  t.not(permitted.expansion, first.expansion, 'permitted expansions are another target')
  t.equal(permitted.expansion.key, first.expansion.key, 'but they mean the same response: one compiled function')
  t.equal(permitted.stringify, first.stringify)
})
