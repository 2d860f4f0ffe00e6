package main

import (
	"errors"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// The kinds of values some settings take, each checked as it is parsed.

// address is a listening address, host:port or :port.
type address string

func (a *address) UnmarshalText(b []byte) error {
	host, port, err := net.SplitHostPort(string(b))
	if err != nil {
		return errors.New("must be host:port or :port")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return errors.New("port must be a number from 0 to 65535")
	}
	if strings.ContainsAny(host, " /") {
		return errors.New("host must be a name or an IP address")
	}
	*a = address(b)
	return nil
}

// httpURL is an http:// or https:// URL.
type httpURL string

func (u *httpURL) UnmarshalText(b []byte) error {
	parsed, err := url.Parse(string(b))
	if err != nil || (parsed.Scheme != "https" && parsed.Scheme != "http") || parsed.Host == "" {
		return errors.New("must be an http:// or https:// URL")
	}
	*u = httpURL(b)
	return nil
}

// logLevel is a slog level named as the documentation names them.
type logLevel slog.Level

func (l *logLevel) UnmarshalText(b []byte) error {
	var level slog.Level
	if err := level.UnmarshalText(b); err != nil {
		return errors.New("must be debug, info, warn or error")
	}
	*l = logLevel(level)
	return nil
}

// byteSize is a request body limit, from 1 byte to 64 MiB.
type byteSize int64

func (n *byteSize) UnmarshalText(b []byte) error {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || v <= 0 || v > 64<<20 {
		return errors.New("must be a whole number of bytes from 1 to 67108864")
	}
	*n = byteSize(v)
	return nil
}

// scope is one OAuth scope (RFC 6749 §3.3: printable ASCII without spaces,
// quotes or backslashes), or empty, which turns its check off. A value with
// a space would name two scopes, and no token could hold it as one.
type scope string

func (s *scope) UnmarshalText(b []byte) error {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return errors.New("must be one scope: printable ASCII without spaces, quotes or backslashes (empty turns the check off)")
		}
	}
	*s = scope(b)
	return nil
}
