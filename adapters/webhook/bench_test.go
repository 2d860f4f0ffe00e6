package webhook

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkSend is one delivery over a kept-alive loopback connection:
// encoding, signing and the round trip. Against httptest, the receiver's
// work and allocations count too; against canned, a responder that
// allocates nothing per request, allocs/op are the Sender's own.
func BenchmarkSend(b *testing.B) {
	b.Run("httptest", func(b *testing.B) {
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		}))
		b.Cleanup(rc.Close)
		benchmarkSend(b, rc.URL)
	})
	b.Run("canned", func(b *testing.B) { benchmarkSend(b, cannedResponder(b)) })
}

func benchmarkSend(b *testing.B, url string) {
	s := newSender(b, Config{})
	e := event(b, url)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Send(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendParallel is BenchmarkSend/httptest from as many goroutines
// as GOMAXPROCS, as the delivery worker would send.
func BenchmarkSendParallel(b *testing.B) {
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(rc.Close)
	s := newSender(b, Config{})
	e := event(b, rc.URL)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Send(context.Background(), e); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// cannedResponder answers every HTTP/1.1 request on a loopback port with
// 204 and returns its URL. It reads header lines and a Content-Length body
// into fixed buffers, so it allocates nothing per request.
func cannedResponder(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go serveCanned(conn) // ends when the sender closes its connections

		}
	}()
	return "http://" + l.Addr().String()
}

func serveCanned(conn net.Conn) {
	answer := []byte("HTTP/1.1 204 No Content\r\n\r\n")
	r := bufio.NewReader(conn)
	body := make([]byte, 64<<10)
	for {
		length := 0
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(bytes.TrimSpace(line)) == 0 {
				break
			}
			if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
				length = 0
				for _, c := range bytes.TrimSpace(v) {
					length = length*10 + int(c-'0')
				}
			}
		}
		if length > len(body) {
			return
		}
		if _, err := io.ReadFull(r, body[:length]); err != nil {
			return
		}
		if _, err := conn.Write(answer); err != nil {
			return
		}
	}
}
