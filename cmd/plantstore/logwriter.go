package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logFlushInterval bounds how long a log line may wait in the buffer.
const logFlushInterval = 100 * time.Millisecond

// bufferedLog gathers log lines and writes them in batches: one write per
// interval instead of one system call per request, which under load is a
// visible share of the service's CPU. Lines wait at most logFlushInterval;
// Close writes out what is left, so a clean stop loses none.
type bufferedLog struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newBufferedLog(out io.Writer) *bufferedLog {
	l := &bufferedLog{w: bufio.NewWriterSize(out, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go l.flushPeriodically()
	return l
}

// Write buffers one log line; slog hands each line over in one call.
func (l *bufferedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *bufferedLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.w.Flush()
}

func (l *bufferedLog) flushPeriodically() {
	defer close(l.done)
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.flush()
		case <-l.stop:
			l.flush()
			return
		}
	}
}

// Close stops the periodic flush and writes out every buffered line.
func (l *bufferedLog) Close() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}
