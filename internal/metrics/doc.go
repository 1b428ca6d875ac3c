// Package metrics is oplab's Prometheus registry: the number of sessions
// in each state (read from the store at each scrape), how long
// provisioning and checks take, the warm pool's size, the WebSocket
// clients, the console's commands and the requests refused, all named
// oplab_*, with the Go runtime's and the process's own metrics beside
// them.
//
// Other packages hold a *Metrics and call its small typed methods; a nil
// *Metrics does nothing, so a package (or a test) without metrics passes
// nil. Handler serves the registry for /metrics.
package metrics
