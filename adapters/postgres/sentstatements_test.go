package postgres

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"
)

// statementRecorder records the text of every statement the store sends to
// PostgreSQL, as the server receives it: a TCP proxy between the store and
// the server that reads the messages the store sends (a simple Query, the
// Parse of an extended query) on their way. A check of the statements the
// store sends sees a statement joined from pieces at run time, which a scan
// of the source's literals sees only in pieces; a proxy sees them all, from
// every session, the session layer and migrations included, without a hook
// in the store's own code. The store reaches it through the URL route
// gives; sessions to it are not encrypted, so that their messages can be
// read.
type statementRecorder struct {
	ln       net.Listener
	upstream string // host:port of the server

	mu       sync.Mutex
	texts    map[string]bool
	routed   int      // the URLs route rewrote: how many stores were opened through it
	unreadOn []string // why a session's messages could not be read
	conns    map[net.Conn]bool
	closed   bool
	wg       sync.WaitGroup
}

// recordStatements starts a recorder in front of the server of rawURL, a
// postgres://host:port URL, closed when the test ends.
func recordStatements(t testing.TB, rawURL string) *statementRecorder {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		t.Fatalf("statementRecorder: %q is not a postgres://host:port URL", rawURL)
	}
	upstream := u.Host
	if u.Port() == "" {
		upstream = net.JoinHostPort(u.Hostname(), "5432")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &statementRecorder{ln: ln, upstream: upstream, texts: map[string]bool{}, conns: map[net.Conn]bool{}}
	r.wg.Go(r.accept)
	t.Cleanup(r.close)
	return r
}

// route points a store's configuration at the recorder: its URL, which must
// name the recorder's server, goes through it without encryption.
func (r *statementRecorder) route(t testing.TB) func(*Config) {
	return func(c *Config) {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Host != r.upstream && net.JoinHostPort(u.Hostname(), "5432") != r.upstream) {
			t.Fatalf("statementRecorder: %q is not on the server %s", c.URL, r.upstream)
		}
		u.Host = r.ln.Addr().String()
		q := u.Query()
		q.Set("sslmode", "disable")
		u.RawQuery = q.Encode()
		c.URL = u.String()
		r.mu.Lock()
		r.routed++
		r.mu.Unlock()
	}
}

// statements are the distinct texts of the statements sent so far, sorted,
// and why any session could not be read.
func (r *statementRecorder) statements() (texts, unread []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for text := range r.texts {
		texts = append(texts, text)
	}
	slices.Sort(texts)
	return texts, slices.Clone(r.unreadOn)
}

func (r *statementRecorder) accept() {
	for {
		client, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Go(func() { r.serve(client) })
	}
}

func (r *statementRecorder) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		_ = c.Close()
		return false
	}
	r.conns[c] = true
	return true
}

func (r *statementRecorder) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	_ = c.Close()
}

func (r *statementRecorder) close() {
	r.mu.Lock()
	r.closed = true
	_ = r.ln.Close()
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// serve relays one session: the store's messages read and recorded, the
// server's answers copied as they come.
func (r *statementRecorder) serve(client net.Conn) {
	defer r.untrack(client)
	if !r.track(client) {
		return
	}
	server, err := net.DialTimeout("tcp", r.upstream, 5*time.Second)
	if err != nil || !r.track(server) {
		return
	}
	defer r.untrack(server)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		_, _ = io.Copy(client, server)
		_ = client.Close()
	}()
	r.relay(client, server)
	_ = server.Close()
	<-answered
}

// Codes of the messages that open a session without a type byte
// (PostgreSQL's "Message Formats"): a request to encrypt it, which would
// hide every message after it.
const (
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
)

// relay passes the store's messages on to the server, recording the text of
// each Query ('Q': the text) and Parse ('P': a name, then the text). A
// message is passed on whole, and the messages read together are written
// together, so that the server sees the exchanges the store sent.
func (r *statementRecorder) relay(client, server net.Conn) {
	in, out := bufio.NewReaderSize(client, 64<<10), bufio.NewWriterSize(server, 64<<10)
	var msg []byte
	for first := true; ; first = false {
		// The first message has no type byte: a StartupMessage, a
		// CancelRequest or a request to encrypt.
		head := 5
		if first {
			head = 4
		}
		msg = slices.Grow(msg[:0], head)[:head]
		if _, err := io.ReadFull(in, msg); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(msg[head-4:]))
		if n < 4 {
			return
		}
		msg = slices.Grow(msg, n-4)[:head+n-4]
		if _, err := io.ReadFull(in, msg[head:]); err != nil {
			return
		}
		body := msg[head:]
		switch {
		case first && len(body) >= 4 && (binary.BigEndian.Uint32(body) == sslRequestCode || binary.BigEndian.Uint32(body) == gssEncRequestCode):
			r.mu.Lock()
			r.unreadOn = append(r.unreadOn, "a session asked for encryption; its statements cannot be read")
			r.mu.Unlock()
			_, _ = server.Write(msg)
			_, _ = io.Copy(server, in)
			return
		case !first && msg[0] == 'Q':
			r.record(cString(body))
		case !first && msg[0] == 'P':
			_, rest, _ := bytes.Cut(body, []byte{0})
			r.record(cString(rest))
		}
		if _, err := out.Write(msg); err != nil {
			return
		}
		if in.Buffered() == 0 {
			if err := out.Flush(); err != nil {
				return
			}
		}
	}
}

func (r *statementRecorder) record(text string) {
	r.mu.Lock()
	r.texts[text] = true
	r.mu.Unlock()
}

// cString is b up to its first NUL.
func cString(b []byte) string {
	s, _, _ := bytes.Cut(b, []byte{0})
	return string(s)
}
