import swagger from '@fastify/swagger'
import Fastify from 'fastify'
import { test } from 'tap'
import expandPlugin, { expandOpenApi, InvalidOptionError } from '../../plugin/index.js'
import { Pet, resources } from '../fixtures/pets.js'

// The mistakes of expandOpenApi's options and of the document it completes
// carry the plugin's code, as the plugin's own options do.
const invalidOption = (message: string) => ({ code: 'FST_EXPAND_INVALID_OPTION', statusCode: 500, message })

/** What `run` throws: its code, status and message, and whether it is an InvalidOptionError. */
interface Thrown { code?: string, statusCode?: number, message?: string, isOptionError: boolean, isTypeError: boolean }

function thrown (run: () => unknown): Thrown {
  try {
    run()
  } catch (error) {
    const { code, statusCode, message } = error as { code?: string, statusCode?: number, message?: string }
    return { code, statusCode, message, isOptionError: error instanceof InvalidOptionError, isTypeError: error instanceof TypeError }
  }
  throw new Error('nothing was thrown')
}

test('expandOpenApi options: FST_EXPAND_INVALID_OPTION with the message naming the option', async (t) => {
  t.same(thrown(() => expandOpenApi({ resources }, { componentPrefix: 'Api Schemas' })), {
    ...invalidOption('expandOpenApi: componentPrefix may hold letters, digits, dots, dashes and underscores only'),
    isOptionError: true,
    isTypeError: true,
  })
  t.same(thrown(() => expandOpenApi({ resources }, { maxEnumeratedPaths: 1.5 })), {
    ...invalidOption('expandOpenApi: maxEnumeratedPaths must be a positive integer'),
    isOptionError: true,
    isTypeError: true,
  })
  for (const hiding of [{ hiddenTag: 7 }, { hideUntagged: 'yes' }]) {
    t.same(thrown(() => expandOpenApi({ resources }, hiding as never)), {
      ...invalidOption('expandOpenApi: hiddenTag must be a string and hideUntagged a boolean, as given to @fastify/swagger'),
      isOptionError: true,
      isTypeError: true,
    })
  }
})

test('a Swagger 2.0 document and a component of the same name: FST_EXPAND_INVALID_OPTION', async (t) => {
  const swagger2 = Fastify()
  t.teardown(() => swagger2.close())
  await swagger2.register(swagger, { swagger: { info: { title: 't', version: '1' } }, transform: expandOpenApi({ resources }).transform as never })
  await swagger2.register(expandPlugin, { resources })
  swagger2.get('/pets/:id', { expandable: { resource: Pet } }, async () => ({}))
  await swagger2.ready()
  t.same(thrown(() => swagger2.swagger()), {
    ...invalidOption("expandOpenApi: the transform documents OpenAPI 3 only; give @fastify/swagger an 'openapi' option"),
    isOptionError: true,
    isTypeError: true,
  })

  const taken = Fastify()
  t.teardown(() => taken.close())
  await taken.register(swagger, {
    openapi: { info: { title: 't', version: '1' }, components: { schemas: { Pet: { type: 'string' } } } },
    transform: expandOpenApi({ resources }).transform,
  })
  await taken.register(expandPlugin, { resources })
  taken.get('/pets/:id', { expandable: { resource: Pet } }, async () => ({}))
  await taken.ready()
  t.same(thrown(() => taken.swagger()), {
    ...invalidOption("expandOpenApi: the document already has a component 'Pet'; set componentPrefix to keep the resource schemas apart"),
    isOptionError: true,
    isTypeError: true,
  })
})
