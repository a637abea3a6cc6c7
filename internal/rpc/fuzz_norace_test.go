//go:build !race

package rpc_test

const fuzzRaceOn = false
