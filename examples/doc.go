// Package examples holds brownout's example files: gateway configurations,
// mock provider sets, eval suites and the game-day library, read from their
// directories by the README, the tests and users. Its Go API is the starter
// that `brownout init` writes: a mock providers file, a gateway configuration
// and one game day that passes as written (starter/).
package examples
