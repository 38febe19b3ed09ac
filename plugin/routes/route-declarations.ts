import { subscribe } from 'node:diagnostics_channel'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { InvalidOptionError, messages } from '../errors.js'
import type { ExpandableRouteOptions } from './expandable-route.js'

/**
 * Fastify ignores route options it does not know, so an `expandable` route
 * declared where no fastify-expand instance sees it (before the plugin is
 * registered, or in a context the plugin is not registered in) would serve
 * the handler's raw data. Every Fastify instance created once this module is
 * loaded records its expandable routes, and its `ready()` fails naming each
 * one that no plugin instance prepared.
 */
const prepared = new WeakSet<RouteOptions>()

/** The route's `expandable` setting, from the route option or `config.expandable`. */
export function expandableSetting (routeOptions: RouteOptions): ExpandableRouteOptions | false | undefined {
  const config = routeOptions.config as { expandable?: ExpandableRouteOptions | false } | undefined
  return routeOptions.expandable ?? config?.expandable
}

/** Called by a plugin instance for each route it prepares. */
export function markPrepared (routeOptions: RouteOptions): void {
  prepared.add(routeOptions)
}

function watch (app: FastifyInstance): void {
  const declared: RouteOptions[] = []
  app.addHook('onRoute', (routeOptions) => {
    const setting = expandableSetting(routeOptions)
    if (setting !== undefined && setting !== false) declared.push(routeOptions)
  })
  app.addHook('onReady', (done) => {
    const missed = declared.filter((routeOptions) => !prepared.has(routeOptions))
    if (missed.length === 0) {
      done()
      return
    }
    const routes = [...new Set(missed.map((routeOptions) => `${String(routeOptions.method)} ${routeOptions.url}`))]
    done(new InvalidOptionError(messages.notPrepared(routes)))
  })
}

subscribe('fastify.initialization', (message) => {
  watch((message as { fastify: FastifyInstance }).fastify)
})
