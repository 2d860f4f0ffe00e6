// Package storetest is the one behaviour suite every store adapter runs
// unchanged, so that all stores keep the same promises: insert once per id,
// never change a stored plant, round-trip content byte for byte, stay correct
// under concurrency, and keep what they acknowledged.
package storetest
