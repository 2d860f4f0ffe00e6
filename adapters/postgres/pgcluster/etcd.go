package pgcluster

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startEtcd starts a one-member etcd, Patroni's store of who leads, and
// waits until it answers.
func (h *HA) startEtcd(t testing.TB, bin string) {
	t.Helper()
	client, peer := h.port(), h.port()
	h.etcdAddr = "127.0.0.1:" + strconv.Itoa(client)
	clientURL, peerURL := "http://"+h.etcdAddr, "http://127.0.0.1:"+strconv.Itoa(peer)
	h.etcd = startDaemon(t, filepath.Join(h.dir, "etcd.log"), h.dir, false, bin,
		"--name", "etcd", "--data-dir", filepath.Join(h.dir, "etcd"),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "etcd="+peerURL, "--initial-cluster-state", "new",
		"--logger", "zap", "--log-level", "warn")
	httpc := &http.Client{Timeout: time.Second}
	h.waitFor(t, 30*time.Second, "etcd does not answer on "+h.etcdAddr, func() error {
		resp, err := httpc.Get(clientURL + "/health")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), `"health":"true"`) {
			return fmt.Errorf("etcd: %s", body)
		}
		return nil
	})
}

// etcdProxy stands between one member and etcd, copying bytes both ways,
// so that a test can cut that member alone off from etcd: while cut it
// closes every connection it has and each new one at once, as a network
// that rejects the member would.
type etcdProxy struct {
	addr   string // where the member connects, host:port
	target string // etcd's client address
	ln     net.Listener

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// startEtcdProxy listens on a free port and forwards to target until close.
func startEtcdProxy(t testing.TB, target string) *etcdProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &etcdProxy{addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	return p
}

func (p *etcdProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(c) {
			_ = c.Close()
			continue
		}
		p.wg.Go(func() { p.forward(c) })
	}
}

// forward copies between c and a new connection to etcd until either side
// closes, or the proxy is cut.
func (p *etcdProxy) forward(c net.Conn) {
	defer p.untrack(c)
	up, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil || !p.track(up) {
		if up != nil {
			_ = up.Close()
		}
		return
	}
	defer p.untrack(up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
}

// track records c so that cutting can close it; it refuses c while cut.
func (p *etcdProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *etcdProxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	_ = c.Close()
}

// setCut cuts the member off (closing what it has) or lets it back.
func (p *etcdProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}

// isCut reports whether the member is cut off.
func (p *etcdProxy) isCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}

// close stops the proxy and waits for its goroutines.
func (p *etcdProxy) close() {
	if p == nil {
		return
	}
	_ = p.ln.Close()
	p.setCut(true)
	p.wg.Wait()
}
