package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// service is one running plantstore process.
type service struct {
	cmd    *exec.Cmd
	api    string // host:port of the API listener
	admin  string // host:port of the admin listener
	log    string // file holding its standard output and error
	exited chan struct{}
	err    error // the process's exit error, once exited is closed
}

// startService runs `plantstore serve` with env added to the environment
// (a later NAME wins) and waits until it reports ready.
func startService(ctx context.Context, bin, dir string, env []string) (*service, error) {
	api, err := freeAddr()
	if err != nil {
		return nil, err
	}
	admin, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp(dir, "service-*.log")
	if err != nil {
		return nil, err
	}
	defer logFile.Close()

	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "PLANTSTORE_ADDR="+api, "PLANTSTORE_ADMIN_ADDR="+admin, "PLANTSTORE_MIGRATE=false")
	cmd.Env = append(cmd.Env, env...)
	// The access log is part of the service's cost; it goes to a file in the
	// page cache, as it would to a log collector's pipe.
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &service{cmd: cmd, api: api, admin: admin, log: logFile.Name(), exited: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(ctx, "http://"+admin+"/readyz"); err != nil {
		_ = s.stop()
		return nil, fmt.Errorf("service did not become ready: %w\n%s", err, s.tail())
	}
	return s, nil
}

func (s *service) waitReady(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("it exited: %v", s.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// peakRSS reads the process's high-water mark of resident memory (VmHWM).
func (s *service) peakRSS() (int64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(s.cmd.Process.Pid), "status"))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmHWM %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// serviceStats is what the service's own metrics say about a run.
type serviceStats struct {
	batch     float64       // mean creates per commit
	batchTook time.Duration // mean time to store a batch, statement to commit
	slowShare float64       // share of POST /plants the service took more than 10 ms to answer
	allocated float64       // bytes allocated per request served
	gcs       float64       // garbage collections per request served
}

// stats reads the service's metrics; zeros where it cannot.
func (s *service) stats() serviceStats {
	var st serviceStats
	resp, err := http.Get("http://" + s.admin + "/metrics")
	if err != nil {
		return st
	}
	defer resp.Body.Close()
	values := map[string]float64{}
	var within10ms, all float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		if strings.HasPrefix(name, "plantstore_http_request_duration_seconds_bucket{") && strings.Contains(name, `route="/plants"`) {
			switch {
			case strings.Contains(name, `le="0.01"`):
				within10ms += v
			case strings.Contains(name, `le="+Inf"`):
				all += v
			}
			continue
		}
		if strings.HasPrefix(name, "plantstore_http_requests_total{") {
			values["requests"] += v
		}
		if strings.HasPrefix(name, "plantstore_store_batch_") || strings.HasPrefix(name, "go_memstats_alloc_bytes_total") ||
			strings.HasPrefix(name, "go_gc_duration_seconds_count") {
			name, _, _ = strings.Cut(name, "{")
			values[name] = v
		}
	}
	if n := values["plantstore_store_batch_size_count"]; n > 0 {
		st.batch = values["plantstore_store_batch_size_sum"] / n
	}
	if n := values["plantstore_store_batch_duration_seconds_count"]; n > 0 {
		st.batchTook = time.Duration(values["plantstore_store_batch_duration_seconds_sum"] / n * 1e9)
	}
	if all > 0 {
		st.slowShare = (all - within10ms) / all
	}
	if n := values["requests"]; n > 0 {
		st.allocated = values["go_memstats_alloc_bytes_total"] / n
		st.gcs = values["go_gc_duration_seconds_count"] / n
	}
	return st
}

// profile saves a CPU profile of the service's measured window, which opens
// warmup from now, to path, through the admin listener's /debug/pprof/.
func (s *service) profile(ctx context.Context, path string, warmup, duration time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		select {
		case <-ctx.Done():
			done <- ctx.Err()
			return
		case <-time.After(warmup):
		}
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.admin, max(1, int(duration.Seconds())))
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			done <- fmt.Errorf("%s: %s", url, resp.Status)
			return
		}
		f, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		done <- errors.Join(err, f.Close())
	}()
	return done
}

// stop sends SIGTERM, as an orchestrator would, and waits for a clean exit.
func (s *service) stop() error {
	select {
	case <-s.exited:
		return s.err
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if s.err != nil {
			return fmt.Errorf("service exit: %w\n%s", s.err, s.tail())
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("service did not stop within 30s of SIGTERM")
	}
}

// tail returns the end of the service's log, for error messages.
func (s *service) tail() string {
	data, _ := os.ReadFile(s.log)
	const keep = 2000
	if len(data) > keep {
		data = data[len(data)-keep:]
	}
	return string(data)
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
