package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBufferedLogWritesEveryLine(t *testing.T) {
	var out syncBuffer
	l := newBufferedLog(&out)
	_, _ = l.Write([]byte("one\n"))
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "one\n") },
		10*time.Second, 10*time.Millisecond, "a buffered line is written without Close")
	_, _ = l.Write([]byte("two\n"))
	l.Close()
	if got := out.String(); got != "one\ntwo\n" {
		t.Fatalf("after Close: %q", got)
	}
	l.Close() // safe twice
}
