package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// Backoff between connection attempts while the database is unreachable.
const (
	firstRetryDelay = 100 * time.Millisecond
	maxRetryDelay   = 2 * time.Second
)

// waitReady pings until the database answers. A database that is down,
// starting or full of connections is retried until ConnectTimeout or the end
// of ctx; one that answers with a definite no (bad password, no such
// database) fails at once, because waiting will not change its mind.
func (s *Store) waitReady(ctx context.Context) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	delay := firstRetryDelay
	var lastErr error // the latest failure of an attempt of its own accord
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, s.cfg.QueryTimeout)
		err := s.db.PingContext(attempt)
		cancelAttempt()
		if err == nil {
			return nil
		}
		if !retryableAtStart(err) {
			if s.poolerRefusedOptions(err) {
				return fmt.Errorf("database at %s refused the connection: %s: %w", s.target, startReason(err), ErrStartupOptionsRefused)
			}
			return fmt.Errorf("database at %s refused the connection: %s", s.target, startReason(err))
		}
		// An attempt cut short by the end of the whole wait says less than
		// the failure before it ("connection refused"). The deadline is read
		// from the clock: ctx.Err() may lag behind a dial that already gave up.
		if cutShort := !time.Now().Before(deadline); !cutShort || lastErr == nil {
			lastErr = err
		}
		s.log.Info("database not reachable yet, retrying", "target", s.target, "err", redact(err, s.cfg.URL))
		select {
		case <-ctx.Done():
			elapsed := time.Since(start).Round(100 * time.Millisecond)
			return fmt.Errorf("database unreachable at %s after %s: %s", s.target, elapsed, startReason(lastErr))
		case <-time.After(delay):
		}
		delay = min(2*delay, maxRetryDelay)
	}
}

// retryableAtStart reports whether a failed first contact may succeed later.
func retryableAtStart(err error) bool {
	if pqErr := pq.As(err); pqErr != nil {
		switch {
		case pqErr.Code.Class() == pqerror.ClassInvalidAuthorizationSpecification,
			pqErr.Code == pqerror.ProtocolViolation, // a pooler refusing a start-up parameter
			pqErr.Code == pqerror.InvalidPassword,
			pqErr.Code == pqerror.InvalidCatalogName:
			return false
		}
	}
	k := classify(err)
	return k == unavailable
}

// ErrStartupOptionsRefused is why Open fails when a pooler (PgBouncer)
// refused the start-up options that the store sends with PoolerNone: the
// store is behind a transaction pooler and must be told so.
var ErrStartupOptionsRefused = errors.New("a pooler refused the start-up options; behind a transaction pooler such as PgBouncer, set the pooler to " + string(PoolerTransaction))

// poolerRefusedOptions reports whether err is a pooler's refusal of the
// start-up options sent on sessions of the store's own.
func (s *Store) poolerRefusedOptions(err error) bool {
	pqErr := pq.As(err)
	return pqErr != nil && pqErr.Code == pqerror.ProtocolViolation && !s.cfg.Pooler.shared() &&
		strings.Contains(pqErr.Message, "startup parameter")
}

// startReason says why the database could not be reached, in the words of
// the network where possible ("connection refused", "no such host").
func startReason(err error) string {
	var sysErr *os.SyscallError
	var opErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.As(err, &dnsErr):
		return dnsErr.Err
	case errors.As(err, &sysErr):
		return sysErr.Err.Error()
	case errors.As(err, &opErr):
		return opErr.Err.Error()
	}
	if pqErr := pq.As(err); pqErr != nil {
		return strings.Join(strings.Fields(pqErr.Message), " ")
	}
	return reason(err)
}

// target returns the host:port a connection URL points at, for messages that
// must never show the URL itself (it may carry a password).
func target(raw string) string {
	if listed, err := hostList(raw); err == nil {
		raw = listed
	}
	if u, err := url.Parse(raw); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		host := cmp.Or(u.Hostname(), u.Query().Get("host"), "localhost")
		port := cmp.Or(u.Port(), u.Query().Get("port"), "5432")
		if hosts, ports := strings.Split(host, ","), strings.Split(port, ","); len(hosts) > 1 {
			for i := range hosts {
				hosts[i] = net.JoinHostPort(hosts[i], ports[min(i, len(ports)-1)])
			}
			return strings.Join(hosts, ",")
		}
		return net.JoinHostPort(host, port)
	}
	host, port := "localhost", "5432"
	for _, field := range strings.Fields(raw) {
		if v, ok := strings.CutPrefix(field, "host="); ok {
			host = v
		}
		if v, ok := strings.CutPrefix(field, "port="); ok {
			port = v
		}
	}
	return net.JoinHostPort(host, port)
}

// redact returns err's text on one line with the URL's password blanked, for
// start-up messages.
func redact(err error, rawURL string) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // the url.Error itself quotes the whole URL
	}
	msg := strings.TrimPrefix(strings.Join(strings.Fields(err.Error()), " "), "pq: ")
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
			if esc := url.UserPassword("", pw).String(); esc != "" {
				msg = strings.ReplaceAll(msg, strings.TrimPrefix(esc, ":"), "xxxxx")
			}
		}
	}
	return msg
}

// sessionSettings are the server settings of every session the store opens.
// JIT compilation is off: the store's queries are short, and JIT is chosen by
// the planner's estimate, which misleads it here. A prepared list statement's
// generic plan takes a LIMIT given as a parameter to read a tenth of the
// table, so on a few million plants every list paid about 20 ms of
// compilation for a query that runs in 0.1 ms. Through a transaction pooler
// there are no session settings; lists turn JIT off in their own
// transaction (see listGroup).
var sessionSettings = []string{"jit=off"}

// connector opens sessions to the database at rawURL. On sessions of their
// own (PoolerNone) it passes sessionSettings and the given settings as
// start-up options before the URL's own options parameter, which therefore
// wins where both set one. Through a transaction pooler, which refuses
// start-up options and shares sessions, it sets none, and sends each
// statement's parse, bind and execution in one exchange (lib/pq's
// binary_parameters), so that no step lands on another server session. A
// URL in libpq's authority form with several hosts is read as lib/pq's
// query form (hostList).
func connector(rawURL string, pooler Pooler, settings ...string) (*pq.Connector, error) {
	listed, err := hostList(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: invalid database URL: %s", redact(err, rawURL))
	}
	u, err := url.Parse(listed)
	if err != nil {
		return nil, fmt.Errorf("store: invalid database URL: %s", redact(err, rawURL))
	}
	q := u.Query()
	if pooler.shared() {
		q.Set("binary_parameters", "yes")
	} else {
		var options []string
		for _, s := range append(slices.Clone(sessionSettings), settings...) {
			options = append(options, "-c "+s)
		}
		if own := q.Get("options"); own != "" {
			options = append(options, own)
		}
		q.Set("options", strings.Join(options, " "))
	}
	u.RawQuery = q.Encode()
	c, err := pq.NewConnector(u.String())
	if err != nil {
		return nil, fmt.Errorf("store: invalid database URL: %s", redact(err, rawURL))
	}
	return c, nil
}
