/*
 * The shape of a resource under an expansion, computed from its definition's
 * types. Nothing here exists at runtime.
 *
 * Schemas are read structurally, so either TypeBox works without this module
 * importing one: @sinclair/typebox 0.34 carries each schema's static type in
 * its phantom `static` property; TypeBox 1.x (the `typebox` package) does not,
 * so its JSON Schema keywords (`type`, `properties`, `required`, `items`,
 * `anyOf`, `const`, `enum`) are read instead, as they are for a schema
 * written by hand `as const`.
 */

/**
 * What `defineResource` takes as a schema: a JSON Schema object, as `Type.Object` of either TypeBox builds it
 * (or one written `as const`).
 */
export interface ObjectSchema {
  type: 'object'
  properties: { [field: string]: unknown }
}

/**
 * The registry of lazy string references, for `Expanded`. A relation written
 * `'Company'` (or `'namespace.Company'`) names a resource by the plugin's
 * registry at runtime; for its type, add it here:
 *
 * ```ts
 * declare module 'fastify-expand' {
 *   interface ResourceRegistry { Company: typeof Company }
 * }
 * ```
 *
 * A reference missing here is expanded to `UnresolvedResource`.
 */
// Declaration merging needs an interface, empty until an application adds to it.
export interface ResourceRegistry {}

/**
 * What `Expanded` gives where it cannot tell the resource: a relation written
 * as a string missing from `ResourceRegistry` or as a thunk typed
 * `AnyResource`, or parameters that are not literal types.
 */
export type UnresolvedResource = { [field: string]: unknown }

/** The shape of a definition's resource, read by `Expanded` (any resource has it). */
interface ShapeSource {
  readonly schema: ObjectSchema
  readonly fields: readonly string[]
  readonly expandable?: object
  readonly nested?: object
  readonly aggregates?: object
  readonly computed?: object
}

/**
 * The data of `resource` as a request with these parameters gets it: each
 * relation it expands holds the related resource's shape (an array for
 * to-many), the others their identifier; deferred relations (expandable but
 * not in `fields`) only when expanded; `fields` and `omit` narrow the fields,
 * at any depth. The parameters are written as in the query string:
 *
 * ```ts
 * type PetData = Expanded<typeof Pet, 'owner.employer,toys', 'id,name,owner'>
 * ```
 *
 * Not inferred: wildcards (`*`, `~all`) in `expand` (write the paths out), a
 * relation written as a string without a `ResourceRegistry` entry or as a
 * thunk typed `AnyResource` (its value is `UnresolvedResource`), and what
 * `fieldsFor` hides from a request (every field is typed as present). A
 * parameter that is not a literal type (`string`) gives `UnresolvedResource`.
 */
export type Expanded<
  R extends ShapeSource,
  Expand extends string = '',
  Fields extends string = '',
  Omitted extends string = ''
> = string extends Expand | Fields | Omitted
  ? UnresolvedResource
  : IsAny<R['schema']> extends true
    ? UnresolvedResource
    : Level<R, R['fields'][number], PathsOf<Expand>, PathsOf<Fields>, PathsOf<Omitted>>

/**
 * `Expanded` for `createSerializer`'s settings: an array of it with
 * `list: true`, either when `list` is not a literal; settings that are not
 * literal types give `UnresolvedResource`.
 */
export type ExpandedBy<R extends ShapeSource, Settings> = ListSetting<Settings> extends infer List
  ? Expanded<R, PathList<Settings, 'expand'>, PathList<Settings, 'fields'>, PathList<Settings, 'omit'>> extends infer Item
    ? List extends true ? Item[] : List extends false ? Item : Item | Item[]
    : never
  : never

type ListSetting<Settings> = 'list' extends keyof Settings
  ? Settings extends { list: true } ? true : Settings extends { list?: false | undefined } ? false : boolean
  : false

/** A setting given as a comma list or an array of paths, as one comma list ('' when absent). */
type PathList<Settings, Key extends string> = Key extends keyof Settings
  ? CommaList<Exclude<Settings[Key], undefined>> | (undefined extends Settings[Key] ? '' : never)
  : ''

type CommaList<Value> = Value extends string ? Value : Value extends readonly string[] ? Join<Value> : ''

type Join<List extends readonly string[]> = List extends readonly [infer First extends string, ...infer Rest extends readonly string[]]
  ? Rest extends readonly [] ? First : `${First},${Join<Rest>}`
  : List extends readonly [] ? '' : string

/** The dot paths of a comma list, as a union; blanks around names dropped, as the parser does. */
type PathsOf<List extends string> = Trim<Split<List>> extends infer Path extends string ? Exclude<Path, ''> : never

type Split<List extends string> = List extends `${infer Head},${infer Tail}` ? Head | Split<Tail> : List

type Trim<Text extends string> = Text extends ` ${infer Rest}` ? Trim<Rest> : Text extends `${infer Rest} ` ? Trim<Rest> : Text

/** The first segment of each path. */
type Heads<Paths extends string> = Paths extends `${infer Head}.${string}` ? Head : Paths

/** The rest of the paths that start with `Field`. */
type Below<Paths extends string, Field extends string> = Paths extends `${Field}.${infer Rest}` ? Rest : never

type Wildcard = '*' | '~all'

/** A relation definition's options, or none. */
type OptionsOf<Definition> = Definition extends readonly [unknown, infer Options] ? Options : {}
type ReferenceOf<Definition> = Definition extends readonly [infer Reference, unknown] ? Reference : Definition

/** The resource a reference names: itself, a thunk's result, or a registry entry. */
type Resolve<Reference> = Reference extends ShapeSource
  ? Reference
  : Reference extends () => infer Result
    ? Result
    : Reference extends keyof ResourceRegistry
      ? ResourceRegistry[Reference]
      : undefined

type RelationsOf<R extends ShapeSource> =
  (R['expandable'] extends object ? R['expandable'] : {}) & (R['nested'] extends object ? R['nested'] : {})
type NestedNames<R extends ShapeSource> = R['nested'] extends object ? keyof R['nested'] & string : never

/**
 * One level: `Base` are the fields it shows by default (the resource's
 * `fields`, or a relation's `fields`/`omit`); `Expand` the paths expanded
 * from here; `Fields`/`Omitted` the request's paths below this level;
 * `Names` the names that exist at it (a relation's options remove the others).
 */
type Level<
  R extends ShapeSource, Base extends string, Expand extends string, Fields extends string, Omitted extends string,
  Names extends string = string
> =
  Shape<R, Shown<R, Base, (Heads<Expand> | NestedNames<R>) & Names, Fields, Omitted>, Expand, Fields, Omitted>

/**
 * The names a level writes: its base, the deferred relations it expands, the
 * derived fields named in `expand` or `fields`, then `fields` and `omit`.
 */
type Shown<R extends ShapeSource, Base extends string, Expanding extends string, Fields extends string, Omitted extends string> =
  Selected<Base | (Expanding & (keyof RelationsOf<R> | DerivedNames<R>)) | (Heads<Fields> & DerivedNames<R>), Fields> extends
  infer Name extends string ? Exclude<Name, Omitted> : never

/** The names of a resource's aggregates and computed fields. */
type DerivedNames<R extends ShapeSource> = LiteralKeys<R['aggregates']> | LiteralKeys<R['computed']>

/** The keys of a map written out; none for a map typed by an index signature (a resource typed loosely). */
type LiteralKeys<Map> = Map extends object ? string extends keyof Map ? never : keyof Map & string : never

/**
 * A derived field's value: `count` a number, `avg` a number or null,
 * `min`/`max`/`sum` the related field's type or null; a computed field its
 * schema's type.
 */
type DerivedValue<R extends ShapeSource, K extends string> =
  R['computed'] extends { [P in K]: { schema: infer Schema } }
    ? SchemaStatic<Schema>
    : R['aggregates'] extends { [P in K]: infer Aggregate }
      ? Aggregate extends { count: string } ? number
        : Aggregate extends { avg: readonly [string, string] } ? number | null
          : Aggregate extends { [fn: string]: readonly [infer Relation extends string, infer Field extends string] }
            ? RelatedField<R, Relation, Field> | null
            : unknown
      : unknown

/** The type of a field of the resource a relation of `R` leads to. */
type RelatedField<R extends ShapeSource, Relation extends string, Field extends string> =
  Relation extends keyof RelationsOf<R>
    ? Resolve<ReferenceOf<RelationsOf<R>[Relation]>> extends infer Related
      ? Related extends ShapeSource ? FieldType<Related['schema'], Field> : unknown
      : unknown
    : unknown

type Selected<Candidates extends string, Fields extends string> =
  [Fields] extends [never] ? Candidates : [Extract<Fields, Wildcard>] extends [never] ? Candidates & Heads<Fields> : Candidates

type Shape<R extends ShapeSource, Names extends string, Expand extends string, Fields extends string, Omitted extends string> = Flatten<
  { [K in Names as K extends OptionalField<R['schema']> ? never : K]: Value<R, K, Expand, Fields, Omitted> } &
  { [K in Names as K extends OptionalField<R['schema']> ? K : never]?: Value<R, K, Expand, Fields, Omitted> }
>

type Value<R extends ShapeSource, K extends string, Expand extends string, Fields extends string, Omitted extends string> =
  K extends DerivedNames<R> ? DerivedValue<R, K> : K extends Heads<Expand> | NestedNames<R>
    ? K extends keyof RelationsOf<R>
      ? Related<RelationsOf<R>[K], FieldType<R['schema'], K>, Below<Expand, K>, Below<Fields, K>, Below<Omitted, K>>
      : FieldType<R['schema'], K>
    : K extends keyof RelationsOf<R> ? Identifiers<RelationsOf<R>[K], FieldType<R['schema'], K>> : FieldType<R['schema'], K>

/**
 * A relation's value when not expanded: its field's declared type, where the
 * related resource has a composite key with each string (of an array's items
 * too) narrowed to the key's identifier, `${number},${number}` for two
 * integer parts (graph/identifiers.ts).
 */
type Identifiers<Definition, Declared> =
  CompositeIdentifier<Resolve<ReferenceOf<Definition>>> extends infer Identifier extends string
    ? [Identifier] extends [never] ? Declared : WithIdentifier<Declared, Identifier>
    : Declared

type WithIdentifier<T, Identifier extends string> =
  T extends string ? Identifier : T extends readonly (infer Item)[] ? Array<WithIdentifier<Item, Identifier>> : T

/** The identifier of a resource whose `primaryKey` is a list of two fields or more; never for any other. */
type CompositeIdentifier<Related> = Related extends ShapeSource & { readonly primaryKey: infer Key }
  ? Key extends readonly [string, string, ...string[]] ? IdentifierParts<Related['schema'], Key> : never
  : never

/** Each part as the identifier writes it: an integer or a number field `${number}`, anything else `${string}`. */
type IdentifierParts<S extends ObjectSchema, Key extends readonly string[]> =
  Key extends readonly [infer First extends string, ...infer Rest extends readonly string[]]
    ? Rest extends readonly [] ? IdentifierPart<S, First> : `${IdentifierPart<S, First>},${IdentifierParts<S, Rest>}`
    : never

type IdentifierPart<S extends ObjectSchema, Field extends string> = FieldType<S, Field> extends number ? `${number}` : string

/** An expanded relation: the related shape, an array of them for to-many, null where the identifier may be null. */
type Related<Definition, Identifier, Expand extends string, Fields extends string, Omitted extends string> =
  (OptionsOf<Definition> extends { many: true }
    ? Array<Target<Definition, Expand, Fields, Omitted>>
    : Target<Definition, Expand, Fields, Omitted>) |
  (null extends Identifier ? null : never)

type Target<Definition, Expand extends string, Fields extends string, Omitted extends string> =
  Resolve<ReferenceOf<Definition>> extends infer Related
    ? Related extends ShapeSource
      ? IsAny<Related['schema']> extends true
        ? UnresolvedResource
        : Level<Related, RelationBase<Related, OptionsOf<Definition>>, Expand | AlwaysExpanded<OptionsOf<Definition>>, Fields, Omitted,
          RelationNames<Related, OptionsOf<Definition>>>
      : UnresolvedResource
    : never

type RelationBase<R extends ShapeSource, Options> = Exclude<
  Options extends { fields: readonly (infer Name extends string)[] } ? Name : R['fields'][number],
  Options extends { omit: readonly (infer Name extends string)[] } ? Name : never
>

/** The names that exist below a relation: its `fields` (a deferred relation it does not list does not), else all, less `omit`. */
type RelationNames<R extends ShapeSource, Options> = Exclude<
  Options extends { fields: readonly (infer Name extends string)[] }
    ? Name
    : R['fields'][number] | (keyof RelationsOf<R> & string) | DerivedNames<R>,
  Options extends { omit: readonly (infer Name extends string)[] } ? Name : never
>

type AlwaysExpanded<Options> = Options extends { expand: readonly (infer Path extends string)[] } ? Path : never

/** A resource typed `AnyResource` (a thunk annotated `(): AnyResource => Pet`) has no shape to read. */
type IsAny<T> = 0 extends 1 & T ? true : false

type Flatten<T> = { [K in keyof T]: T[K] } & {}

/** The fields of a schema that may be absent. */
type OptionalField<S extends ObjectSchema> = S extends { static: infer Static }
  ? { [K in keyof Static]-?: {} extends Pick<Static, K> ? K : never }[keyof Static] & string
  : NotRequired<S, keyof S['properties'] & string>

/**
 * The properties an object schema does not list in `required`, as JSON Schema
 * (and the serializer) read it: TypeBox 1.x writes the required names as a
 * tuple type, and no `required` at all when every property is optional.
 */
type NotRequired<Schema, Key extends string> =
  Schema extends { required: readonly (infer Required extends string)[] } ? Exclude<Key, Required> : Key

/** The type of one field's value, as the schema declares it. */
export type FieldType<S extends ObjectSchema, K extends string> = S extends { static: infer Static }
  ? K extends keyof Static ? Exclude<Static[K], undefined> : never
  : SchemaStatic<S['properties'][K]>

/**
 * The type a JSON Schema describes, for the keywords TypeBox 1.x writes.
 * Anything else is `unknown`.
 */
export type SchemaStatic<Schema> =
  Schema extends { static: infer Static } ? Static
    : Schema extends { const: infer Value } ? Value
      : Schema extends { enum: readonly (infer Value)[] } ? Value
        : Schema extends { anyOf: readonly unknown[] } ? SchemaStatic<Schema['anyOf'][number]>
          : Schema extends { oneOf: readonly unknown[] } ? SchemaStatic<Schema['oneOf'][number]>
            : Schema extends { type: 'array'; items: infer Items } ? Array<SchemaStatic<Items>>
              : Schema extends { type: 'object'; properties: infer Properties } ? Flatten<
                { [K in keyof Properties as K extends NotRequired<Schema, K & string> ? never : K]: SchemaStatic<Properties[K]> } &
                { [K in keyof Properties as K extends NotRequired<Schema, K & string> ? K : never]?: SchemaStatic<Properties[K]> }
              >
                : Schema extends { type: infer Name } ? TypeName<Name>
                  : unknown

type TypeName<Name> =
  Name extends readonly (infer Each)[] ? TypeName<Each>
    : Name extends 'string' ? string
      : Name extends 'number' | 'integer' ? number
        : Name extends 'boolean' ? boolean
          : Name extends 'null' ? null
            : unknown

/**
 * A row after `app.expand.load`, typed from the row alone: the fields the
 * request expands (which the row's type cannot tell) may now hold the related
 * data, and to-many relations may be added. For the exact type, give `load`
 * the shape as its type argument: `load<Expanded<typeof Pet, 'owner'>>(...)`.
 */
export type Loaded<T> = { [K in keyof T]: T[K] | LoadedRelation } & { [field: string]: unknown }

/** What `load` writes into a relation field: the related row, its rows (to-many), or their identifiers (to-many, not expanded). */
export type LoadedRelation = UnresolvedResource | UnresolvedResource[] | Array<string | number | bigint> | null
