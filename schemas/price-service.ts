import { setTimeout as delay } from 'node:timers/promises'

/*
 * A stand-in for the pet shop's pricing service, which the demo has no
 * database table for: Toy.price (schemas/index.ts) is resolved by calling it
 * once per request with every toy id the request needs. It answers after a
 * few milliseconds, as a service across the network would, and stops waiting
 * when `signal` is aborted (the client has gone): a real client passes the
 * signal on, `fetch(url, { signal })`.
 */

/** A toy's price today, as the pricing service quotes it (a type, not an interface: a row is a record). */
export type PriceQuote = {
  toy: number
  cents: number
  currency: 'EUR'
  on_sale: boolean
}

/** How long the fake service takes to answer one call, whatever the number of keys. */
export const priceServiceLatencyMs = 5

/**
 * Today's price of each toy id: derived from the id, so that every call and
 * every run answers the same (a toy on sale costs 20% less). An id that is not
 * a positive integer has no price: the Map leaves it out.
 */
export async function fakePriceService (toyIds: readonly unknown[], signal: AbortSignal): Promise<Map<number, PriceQuote>> {
  const ids = toyIds.map(Number).filter((id) => Number.isInteger(id) && id > 0)
  await delay(priceServiceLatencyMs, undefined, { signal })
  return new Map(ids.map((id) => [id, quoteOf(id)]))
}

function quoteOf (toy: number): PriceQuote {
  const listCents = 199 + ((toy * 7919) % 4801)
  const onSale = toy % 4 === 0
  return { toy, cents: onSale ? Math.round(listCents * 0.8) : listCents, currency: 'EUR', on_sale: onSale }
}
