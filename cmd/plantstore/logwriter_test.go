package main

import (
	"strings"
	"testing"
	"time"
)

func TestBufferedLogWritesEveryLine(t *testing.T) {
	var out syncBuffer
	l := newBufferedLog(&out)
	_, _ = l.Write([]byte("one\n"))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "one\n") {
		if time.Now().After(deadline) {
			t.Fatal("a buffered line was never written")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, _ = l.Write([]byte("two\n"))
	l.Close()
	if got := out.String(); got != "one\ntwo\n" {
		t.Fatalf("after Close: %q", got)
	}
	l.Close() // safe twice
}
