// Package storetest is the one behaviour suite every store adapter runs
// unchanged, so that all stores keep the same promises: insert once per id,
// never change a stored plant, round-trip content byte for byte, stay correct
// under concurrency, keep what they acknowledged, and record each write that
// wrote in the event feed, which a reader walks without missing one.
package storetest
