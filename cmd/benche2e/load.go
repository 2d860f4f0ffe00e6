package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"
)

// The load is written directly on keep-alive TCP connections, as wrk does,
// rather than through net/http's client: the generator shares the cores with
// the service and must cost it as little as possible.

// loadBody is the plant every request creates, under a fresh id.
const (
	loadBodyHead = `{"id":`
	loadBodyTail = `,"name":"Monstera deliciosa","tag":"indoor"}`
)

// runLoad keeps conns connections busy posting creates of distinct plants to
// the service at addr for warmup plus duration, and measures the requests
// that finish in the last duration.
func runLoad(ctx context.Context, addr, token string, conns int, warmup, duration time.Duration) (*sample, error) {
	start := time.Now()
	w := window{start: start.Add(warmup), end: start.Add(warmup + duration)}
	ctx, cancel := context.WithDeadline(ctx, w.end)
	defer cancel()

	results := make([]*sample, conns)
	errs := make([]error, conns)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			results[i], errs[i] = postLoop(ctx, addr, token, w)
		})
	}
	wg.Wait()
	total := &sample{window: duration}
	for i, r := range results {
		if errs[i] != nil {
			return nil, errs[i]
		}
		total.completed += r.completed
		total.failed += r.failed
		total.latencies = append(total.latencies, r.latencies...)
	}
	return total, nil
}

// postLoop is one connection of the load: one request at a time, each sent
// when the previous answer has been read.
func postLoop(ctx context.Context, addr, token string, w window) (*sample, error) {
	s := &sample{latencies: make([]time.Duration, 0, 4096)}
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	var c *conn
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	var req []byte
	dialFailures := 0
	for ctx.Err() == nil {
		if c == nil {
			var err error
			if c, err = dial(ctx, addr); err != nil {
				if ctx.Err() != nil {
					break
				}
				if dialFailures++; dialFailures > 10 {
					return nil, fmt.Errorf("connect to the service: %w", err)
				}
				time.Sleep(10 * time.Millisecond)
				continue
			}
		}
		req = appendCreate(req[:0], addr, token, rng.Int64N(1<<63-1)+1)
		sent := time.Now()
		status, reusable, err := c.roundTrip(req)
		done := time.Now()
		if err == nil && !reusable {
			_ = c.Close()
			c = nil
		}
		if err != nil {
			// A connection the service closed (shutdown, idle timeout)
			// is redialled; the request counts as failed if it was due.
			_ = c.Close()
			c = nil
			if ctx.Err() == nil && w.contains(done) {
				s.completed++
				s.failed++
			}
			continue
		}
		if !w.contains(done) {
			continue
		}
		s.completed++
		if status < 200 || status > 299 {
			s.failed++
		}
		s.latencies = append(s.latencies, done.Sub(sent))
	}
	return s, nil
}

// appendCreate appends one POST /plants request creating the plant id.
func appendCreate(b []byte, host, token string, id int64) []byte {
	var body [96]byte
	n := copy(body[:], loadBodyHead)
	n += len(strconv.AppendInt(body[n:n], id, 10))
	n += copy(body[n:], loadBodyTail)
	b = append(b, "POST /plants HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\nAuthorization: Bearer "...)
	b = append(b, token...)
	b = append(b, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body[:n]...)
}

// conn is one keep-alive HTTP/1.1 connection.
type conn struct {
	net.Conn
	r *bufio.Reader
}

func dial(ctx context.Context, addr string) (*conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	// The deadline of the run also ends a request left waiting.
	if deadline, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(deadline)
	}
	return &conn{Conn: c, r: bufio.NewReaderSize(c, 4096)}, nil
}

// roundTrip writes req and reads the response, returning its status code and
// whether the connection stays open. It understands what the service sends:
// a Content-Length or a chunked body.
func (c *conn) roundTrip(req []byte) (status int, reusable bool, err error) {
	if _, err := c.Write(req); err != nil {
		return 0, false, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	length, chunked, closing := -1, false, false
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return 0, false, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	switch {
	case chunked:
		err = c.skipChunks()
	case length >= 0:
		_, err = c.r.Discard(length)
	default:
		return 0, false, errors.New("response without a length")
	}
	return status, !closing, err
}

func (c *conn) skipChunks() error {
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if _, err := c.r.Discard(int(size) + 2); err != nil {
			return err
		}
		if size == 0 {
			return nil
		}
	}
}
