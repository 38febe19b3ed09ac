import t from 'tap'
import { Type } from '@sinclair/typebox'
import { createSerializer, defineResource } from '../../plugin/index.js'
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

// The engine kept for a registry is built from that registry and the resource of its first call: a later call with
// the same registry and another resource gets an engine of its own, whatever the resources' names.
const Author = defineResource({ name: 'Author', schema: Type.Object({ id: Type.Integer(), name: Type.String() }), fields: ['id', 'name'] })
const postSchema = { id: Type.Integer(), title: Type.String(), author: Type.Integer() }
const PublicPost = defineResource({ name: 'Post', schema: Type.Object(postSchema), fields: ['id', 'title', 'author'], expandable: { author: Author } })
const AdminPost = defineResource({
  name: 'Post',
  schema: Type.Object({ ...postSchema, notes: Type.String() }),
  fields: ['id', 'title', 'author', 'notes'],
  expandable: { author: Author },
})
const Comment = defineResource({ name: 'Comment', schema: Type.Object({ id: Type.Integer(), body: Type.String() }), fields: ['id', 'body'] })
const post = { id: 1, title: 'Hello', author: 2, notes: 'internal', body: 'Nice' }

t.test('one registry, two resources of one name: each serializer writes its own resource', async (t) => {
  const registry = [Author]
  t.equal(createSerializer(AdminPost, { resources: registry }).stringify(post), '{"id":1,"title":"Hello","author":2,"notes":"internal"}')
  t.equal(createSerializer(PublicPost, { resources: registry }).stringify(post), '{"id":1,"title":"Hello","author":2}',
    'the public view after the admin one: no notes')
  t.equal(createSerializer(AdminPost, { resources: registry }).stringify(post), '{"id":1,"title":"Hello","author":2,"notes":"internal"}')
})

t.test('one registry, then a resource it does not hold: serialized as on its own', async (t) => {
  const registry = [Author]
  createSerializer(PublicPost, { resources: registry })
  t.equal(createSerializer(Comment, { resources: registry }).stringify(post), '{"id":1,"body":"Nice"}')
  t.equal(createSerializer(PublicPost, { resources: registry, expand: 'author' }).stringify({ ...post, author: { id: 2, name: 'Ann' } }),
    '{"id":1,"title":"Hello","author":{"id":2,"name":"Ann"}}')
})
