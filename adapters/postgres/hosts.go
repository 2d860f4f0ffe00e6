package postgres

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// hostList rewrites a URL in libpq's authority form with several hosts, the
// form PostgreSQL's documentation shows for failover
// (postgres://user:pw@a:5432,b:5433/db?target_session_attrs=read-write),
// into the query form that lib/pq reads
// (postgres://user:pw@/db?host=a,b&port=5432,5433&target_session_attrs=read-write),
// which lib/pq would otherwise dial as one host named "a:5432,b". A host
// without a port gets 5432, as in libpq. Any other URL is returned as it is.
func hostList(raw string) (string, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || (scheme != "postgres" && scheme != "postgresql") {
		return raw, nil
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo, hostport := "", authority
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		userinfo, hostport = authority[:at+1], authority[at+1:]
	}
	if !strings.Contains(hostport, ",") {
		return raw, nil
	}
	var hosts, ports []string
	for _, hp := range strings.Split(hostport, ",") {
		host, port, err := splitHostPort(hp)
		if err != nil {
			return "", err
		}
		hosts, ports = append(hosts, host), append(ports, port)
	}
	u, err := url.Parse(scheme + "://" + userinfo + tail)
	if err != nil {
		return "", err
	}
	q := u.Query()
	if q.Has("host") || q.Has("port") {
		return "", errors.New("hosts given both before the path and as host or port parameters")
	}
	q.Set("host", strings.Join(hosts, ","))
	q.Set("port", strings.Join(ports, ","))
	u.RawQuery = q.Encode()
	if u.Path == "" {
		u.Path = "/" // keeps the "//" that lib/pq looks for
	}
	return u.String(), nil
}

// splitHostPort splits one host[:port] of a host list; an IPv6 address is
// in brackets.
func splitHostPort(hp string) (host, port string, err error) {
	if hp == "" {
		return "", "", errors.New("an empty host in the host list")
	}
	if !strings.Contains(strings.TrimPrefix(hp, "["), ":") || (strings.HasPrefix(hp, "[") && strings.HasSuffix(hp, "]")) {
		return strings.Trim(hp, "[]"), "5432", nil
	}
	host, port, err = net.SplitHostPort(hp)
	if err != nil {
		return "", "", err
	}
	if port == "" {
		port = "5432"
	}
	return host, port, nil
}

// loginBound is how long a new session may take to log in on the database
// at rawURL: the query timeout, and a second at least (minLoginTimeout);
// with several hosts, each given its connect_timeout, since lib/pq tries
// them in turn, each for that long. A host that takes connections and never
// answers (a frozen machine, a stopped server) listed before the primary
// would otherwise use the whole login up, and no session could open. A
// caller waiting for the session still gives up at its own deadline.
func loginBound(rawURL string, queryTimeout time.Duration) time.Duration {
	bound := max(queryTimeout, minLoginTimeout)
	listed, err := hostList(rawURL)
	if err != nil {
		return bound
	}
	u, err := url.Parse(listed)
	if err != nil {
		return bound
	}
	hosts := len(strings.Split(u.Query().Get("host"), ","))
	seconds, err := strconv.Atoi(u.Query().Get("connect_timeout"))
	if hosts < 2 || err != nil || seconds <= 0 {
		return bound
	}
	return max(bound, time.Duration(hosts*seconds)*time.Second+minLoginTimeout)
}
