package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// service is one running `plantstore serve`, started fresh for a cell so
// that its peak RSS is that cell's, from a cold start.
type service struct {
	cmd        *exec.Cmd
	api, admin string // host:port of the listeners
	log        *os.File
	exited     chan struct{}
	err        error // the exit error, once exited is closed
	// untidy: the process has no graceful shutdown, so that ending on the
	// SIGTERM stop sends is its clean exit (the peer and the floor).
	untidy bool
}

// startService runs bin with env added to the environment (a later NAME
// wins) and waits until it is ready. Its log, the access log included, goes
// to a file in dir: it is part of the service's cost.
func startService(ctx context.Context, bin, dir string, env []string) (*service, error) {
	addrs, err := freeAddrs(2)
	if err != nil {
		return nil, err
	}
	api, admin := addrs[0], addrs[1]
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "PLANTSTORE_ADDR="+api, "PLANTSTORE_ADMIN_ADDR="+admin, "PLANTSTORE_MIGRATE=false")
	cmd.Env = append(cmd.Env, env...)
	s := &service{cmd: cmd, api: api, admin: admin}
	err = s.start(ctx, dir, func() bool {
		resp, err := http.Get("http://" + admin + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// start runs s.cmd with its output to a log file in dir and waits, up to
// 30 seconds, until ready says it serves; on failure it stops it.
func (s *service) start(ctx context.Context, dir string, ready func() bool) error {
	logFile, err := os.CreateTemp(dir, filepath.Base(s.cmd.Path)+"-*.log")
	if err != nil {
		return err
	}
	s.log, s.exited = logFile, make(chan struct{})
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		_ = logFile.Close()
		return err
	}
	go func() { s.err = s.cmd.Wait(); close(s.exited) }()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for !ready() {
		select {
		case <-wait.Done():
		case <-s.exited:
		case <-time.After(20 * time.Millisecond):
			continue
		}
		_ = s.stop()
		return fmt.Errorf("%s did not become ready (%v)\n%s", filepath.Base(s.cmd.Path), s.err, s.tail())
	}
	return nil
}

// peakRSS reads the process's high-water mark of resident memory (VmHWM).
func (s *service) peakRSS() (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/status")
	_, v, ok := strings.Cut(string(data), "VmHWM:")
	var kb int64
	if _, err2 := fmt.Sscan(v, &kb); err != nil || !ok || err2 != nil {
		return 0, fmt.Errorf("no VmHWM in /proc status: %w", errors.Join(err, err2))
	}
	return kb << 10, nil
}

// profile saves a CPU profile of the window that opens warmup from now to
// path, from the admin listener's /debug/pprof/ (PLANTSTORE_PROFILING=true).
func (s *service) profile(path string, warmup, duration time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		time.Sleep(warmup)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.admin, max(1, int(duration.Seconds()))))
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("profile: %s", resp.Status)
		} else if err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
		done <- err
	}()
	return done
}

// stop sends SIGTERM, as an orchestrator would, and waits for a clean exit;
// the error carries the end of the log.
func (s *service) stop() error {
	defer s.log.Close()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.err = errors.New("did not stop within 30s of SIGTERM")
	}
	var ee *exec.ExitError
	if s.untidy && errors.As(s.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	if s.err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w\n%s", filepath.Base(s.cmd.Path), s.err, s.tail())
}

// tail returns the end of the service's log, for error messages.
func (s *service) tail() []byte {
	data, _ := os.ReadFile(s.log.Name())
	return data[max(0, len(data)-2000):]
}

// freeAddrs returns n loopback addresses with distinct ports nobody
// listens on now.
func freeAddrs(n int) ([]string, error) {
	// Below Linux's ephemeral range (32768-60999): a port the kernel hands
	// out could be taken by any outgoing connection (the load's, the
	// database's) between this check and the service's listen. Each port
	// stays held until all are drawn, so that two never coincide.
	var (
		addrs []string
		err   error
	)
	for tries := 0; len(addrs) < n && tries < 100*n; tries++ {
		var l net.Listener
		if l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))); err == nil {
			addrs = append(addrs, l.Addr().String())
			defer l.Close()
		}
	}
	if len(addrs) < n {
		return nil, fmt.Errorf("no free port below the ephemeral range: %w", err)
	}
	return addrs, nil
}

// freeAddr returns one loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	addrs, err := freeAddrs(1)
	if err != nil {
		return "", err
	}
	return addrs[0], nil
}
