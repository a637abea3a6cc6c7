//go:build race

package session_test

// fuzzRaceOn scales the hostile-input memory tests down under the race detector, whose
// shadow memory multiplies the heap several times.
const fuzzRaceOn = true
