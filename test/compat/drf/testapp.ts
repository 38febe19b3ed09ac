import { Type } from '@sinclair/typebox'
import { defineResource } from '../../../plugin/index.js'

// drf-flex-fields' own test app (tests/testapp): its models and serializers as
// resources. Lazy references use the namespace form that stands for its dotted
// import paths: 'testapp.Company' for 'tests.testapp.serializers.CompanySerializer',
// 'testapp.Person' for 'tests.testapp.PersonSerializer'.

export const Company = defineResource({
  name: 'Company',
  namespace: 'testapp',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), public: Type.Boolean() }),
  fields: ['name', 'public'],
})

export const Person = defineResource({
  name: 'Person',
  namespace: 'testapp',
  schema: Type.Object({ id: Type.Integer(), name: Type.String(), hobbies: Type.String(), employer: Type.Integer() }),
  fields: ['name', 'hobbies'],
  expandable: { employer: 'testapp.Company' },
})

export const PetStore = defineResource({
  name: 'PetStore',
  namespace: 'testapp',
  schema: Type.Object({ id: Type.Integer(), name: Type.String() }),
  fields: ['id', 'name'],
})

// PetSerializer. Its `diet` SerializerMethodField, "expandable" from "" to a
// computed string, has no counterpart: an expandable field here is a relation
// to a resource, so `diet` is left out of the port.
export const Pet = defineResource({
  name: 'Pet',
  namespace: 'testapp',
  schema: Type.Object({
    id: Type.Integer(),
    owner: Type.Integer(),
    name: Type.String(),
    toys: Type.String(),
    species: Type.String(),
    sold_from: Type.Union([Type.Integer(), Type.Null()]),
  }),
  fields: ['owner', 'name', 'toys', 'species', 'sold_from'],
  expandable: { owner: 'testapp.Person', sold_from: 'testapp.PetStore' },
})

// The PetSerializer of tests/test_serializer.py's era: no sold_from.
export const PlainPet = defineResource({
  name: 'PlainPet',
  namespace: 'testapp',
  schema: Type.Object({ id: Type.Integer(), owner: Type.Integer(), name: Type.String(), toys: Type.String(), species: Type.String() }),
  fields: ['owner', 'name', 'toys', 'species'],
  expandable: { owner: Person },
})

export const testappResources = [Company, Person, PetStore, Pet, PlainPet]
