//go:build !race

package session_test

const fuzzRaceOn = false
