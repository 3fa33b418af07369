// Package control is the typed Go client of a mock provider's control API
// (/_mock/faults, /_mock/reset, /_mock/journal, /_mock/stats), for game days
// and tests that drive mocks running in another process.
package control
