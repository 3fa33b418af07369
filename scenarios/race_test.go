//go:build race

package scenarios

// raceEnabled: the simulator is single-goroutine code, so under the race
// detector the long game-day library runs only its flagship.
const raceEnabled = true
