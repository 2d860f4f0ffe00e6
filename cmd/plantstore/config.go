package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is the service's whole configuration. Every field is filled from
// one row of settings, the one place a setting is defined.
type Config struct {
	Addr      string
	AdminAddr string

	DatabaseURL    string
	Migrate        bool
	DBMaxOpenConns int
	DBMaxIdleConns int
	DBConnLifetime time.Duration
	DBQueryTimeout time.Duration
	DBStartupWait  time.Duration
	BatchMaxSize   int
	BatchMaxWait   time.Duration

	JWTSecretFile    string
	JWTPublicKeyFile string
	JWKSURL          string
	JWKSRefresh      time.Duration
	JWTIssuer        string
	JWTAudience      string
	WriteScope       string
	ReadScope        string

	MaxBodyBytes      int64
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
	ShutdownTimeout   time.Duration

	LogLevel  slog.Level
	Profiling bool
	Dev       bool

	// effective holds each setting's value as given, for the start-up log.
	effective map[string]string
}

// setting is one configuration entry: its flag, its environment variable,
// its default, what it means, and how a value is parsed into Config.
type setting struct {
	flag   string
	def    string
	help   string
	secret bool // masked when the configuration is logged
	// emptyMeansOff: set to the empty string, the setting turns its check
	// off; for other settings an empty variable counts as unset.
	emptyMeansOff bool
	parse         func(c *Config, v string) error
}

// env is the variable that sets s: PLANTSTORE_ and the flag in capitals.
func (s setting) env() string {
	return "PLANTSTORE_" + strings.ToUpper(strings.ReplaceAll(s.flag, "-", "_"))
}

// settings lists every setting of `serve`. Flags, environment variables,
// `serve --help`, the start-up log line and the deployment tests all read it.
var settings = []setting{
	{flag: "addr", def: ":8080", help: "API listener address", parse: address(func(c *Config) *string { return &c.Addr })},
	{flag: "admin-addr", def: "127.0.0.1:9090", help: "admin listener address (/healthz, /readyz, /metrics)", parse: address(func(c *Config) *string { return &c.AdminAddr })},
	{flag: "database-url", def: "sqlite:plantstore.db", secret: true, help: "the store: sqlite:PATH (embedded) or postgres://... / postgresql://...", parse: parseDatabaseURL},
	{flag: "migrate", def: "true", help: "apply schema migrations when serve starts", parse: boolean(func(c *Config) *bool { return &c.Migrate })},
	{flag: "db-max-open-conns", def: "8", help: "PostgreSQL: maximum open connections in the pool", parse: positive(func(c *Config) *int { return &c.DBMaxOpenConns })},
	{flag: "db-max-idle-conns", def: "8", help: "PostgreSQL: maximum idle connections kept in the pool", parse: positive(func(c *Config) *int { return &c.DBMaxIdleConns })},
	{flag: "db-conn-max-lifetime", def: "30m", help: "PostgreSQL: connections are recycled after this long", parse: duration(func(c *Config) *time.Duration { return &c.DBConnLifetime })},
	{flag: "db-query-timeout", def: "5s", help: "longest a store statement may take before the create answers 503", parse: duration(func(c *Config) *time.Duration { return &c.DBQueryTimeout })},
	{flag: "db-startup-wait", def: "30s", help: "PostgreSQL: how long start-up retries an unreachable database before giving up", parse: duration(func(c *Config) *time.Duration { return &c.DBStartupWait })},
	{flag: "batch-max-size", def: "256", help: "most writes (creates and deletes) gathered into one statement and commit", parse: positive(func(c *Config) *int { return &c.BatchMaxSize })},
	{flag: "batch-max-wait", def: "200us", help: "longest a write waits for others to share its commit (0: only those already queued)", parse: nonNegativeDuration(func(c *Config) *time.Duration { return &c.BatchMaxWait })},
	{flag: "jwt-secret-file", help: "file holding the HS256/384/512 secret (a trailing newline is ignored)", parse: str(func(c *Config) *string { return &c.JWTSecretFile })},
	{flag: "jwt-public-key-file", help: "PEM file with one or more public keys (RSA, EC, Ed25519)", parse: str(func(c *Config) *string { return &c.JWTPublicKeyFile })},
	{flag: "jwks-url", help: "JWKS endpoint whose keys verify tokens by kid", parse: parseJWKSURL},
	{flag: "jwks-refresh", def: "1h", help: "how often the JWKS is refreshed in the background", parse: duration(func(c *Config) *time.Duration { return &c.JWKSRefresh })},
	{flag: "jwt-issuer", help: "required iss claim, when set", parse: str(func(c *Config) *string { return &c.JWTIssuer })},
	{flag: "jwt-audience", help: "required aud claim, when set", parse: str(func(c *Config) *string { return &c.JWTAudience })},
	{flag: "required-scope", def: "plants:write", emptyMeansOff: true, help: "scope a create or a delete needs; empty turns the check off", parse: str(func(c *Config) *string { return &c.WriteScope })},
	{flag: "read-scope", def: "plants:read", emptyMeansOff: true, help: "scope a read or a list needs; empty turns the check off", parse: str(func(c *Config) *string { return &c.ReadScope })},
	{flag: "max-body-bytes", def: "65536", help: "request body limit in bytes", parse: parseMaxBody},
	{flag: "read-header-timeout", def: "5s", help: "time a client has to send the request headers", parse: duration(func(c *Config) *time.Duration { return &c.ReadHeaderTimeout })},
	{flag: "read-timeout", def: "15s", help: "time a client has to send the whole request", parse: duration(func(c *Config) *time.Duration { return &c.ReadTimeout })},
	{flag: "write-timeout", def: "30s", help: "time to write a response, from the end of the request headers", parse: duration(func(c *Config) *time.Duration { return &c.WriteTimeout })},
	{flag: "idle-timeout", def: "60s", help: "how long an idle keep-alive connection stays open", parse: duration(func(c *Config) *time.Duration { return &c.IdleTimeout })},
	{flag: "max-header-bytes", def: "1048576", help: "largest request header block in bytes", parse: positive(func(c *Config) *int { return &c.MaxHeaderBytes })},
	{flag: "shutdown-timeout", def: "15s", help: "grace period for in-flight requests on SIGTERM/SIGINT", parse: duration(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
	{flag: "log-level", def: "info", help: "debug, info, warn or error", parse: parseLogLevel},
	{flag: "profiling", def: "false", help: "serve Go runtime profiles at /debug/pprof/ on the admin listener", parse: boolean(func(c *Config) *bool { return &c.Profiling })},
	{flag: "dev", def: "false", help: "development mode: without a configured key, use (and create) a local secret and print a token", parse: boolean(func(c *Config) *bool { return &c.Dev })},
}

// loadConfig reads the settings from the environment, then from args, which
// win. Each value is checked; the first bad one is the error, naming it.
func loadConfig(name string, args []string, getenv func(string) (string, bool), usage io.Writer) (*Config, error) {
	c := &Config{effective: make(map[string]string, len(settings))}
	for _, s := range settings {
		if s.def == "" {
			continue // the zero value means "none"
		}
		if err := c.set(s, s.def); err != nil {
			panic("default of " + s.flag + ": " + err.Error()) // a programming error
		}
	}
	for _, s := range settings {
		if v, ok := getenv(s.env()); ok && (v != "" || s.emptyMeansOff) {
			if err := c.set(s, v); err != nil {
				return nil, fmt.Errorf("%s=%q: %w", s.env(), mask(s, v), err)
			}
		}
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned as one line, not with the whole usage
	fs.Usage = func() {}
	for _, s := range settings {
		set := func(v string) error { return c.set(s, v) }
		if s.def == "false" || s.def == "true" {
			fs.BoolFunc(s.flag, s.help, set) // works without a value, as --dev
		} else {
			fs.Func(s.flag, s.help, set)
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printSettings(usage, name)
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return c, nil
}

// set parses v into c and remembers it as the setting's effective value.
func (c *Config) set(s setting, v string) error {
	if err := s.parse(c, v); err != nil {
		return err
	}
	c.effective[s.flag] = v
	return nil
}

// printSettings writes the help of a command that takes every setting.
func printSettings(w io.Writer, name string) {
	fmt.Fprintf(w, "Usage: plantstore %s [flags]\n\nEvery flag can also be set by its environment variable; a flag wins.\n\n", name)
	for _, s := range settings {
		def := s.def
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(w, "  --%s  (%s, default %s)\n      %s\n", s.flag, s.env(), def, s.help)
	}
}

// logAttrs is the effective configuration for the start-up log line, with
// secrets masked.
func (c *Config) logAttrs() []any {
	attrs := make([]any, 0, len(settings))
	for _, s := range settings {
		attrs = append(attrs, slog.String(s.env(), mask(s, c.effective[s.flag])))
	}
	return attrs
}

// mask hides a password inside a database URL, and any other secret value.
func mask(s setting, v string) string {
	if !s.secret || v == "" {
		return v
	}
	if u, err := url.Parse(v); err == nil && u.User != nil {
		return u.Redacted()
	}
	if strings.Contains(v, "password=") {
		return "(masked)"
	}
	return v
}

func str(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *field(c) = v; return nil }
}

func boolean(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		*field(c) = b
		return nil
	}
}

func positive(field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return errors.New("must be a positive whole number")
		}
		*field(c) = n
		return nil
	}
}

func duration(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errors.New("must be a positive duration such as 500ms, 15s or 1m")
		}
		*field(c) = d
		return nil
	}
}

func nonNegativeDuration(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return errors.New("must be a duration such as 0s, 500us or 2ms")
		}
		*field(c) = d
		return nil
	}
}

func address(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		host, port, err := net.SplitHostPort(v)
		if err != nil {
			return errors.New("must be host:port or :port")
		}
		if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			return errors.New("port must be a number from 0 to 65535")
		}
		if strings.ContainsAny(host, " /") {
			return errors.New("host must be a name or an IP address")
		}
		*field(c) = v
		return nil
	}
}

func parseDatabaseURL(c *Config, v string) error {
	switch {
	case strings.HasPrefix(v, "sqlite:"):
		if strings.TrimPrefix(v, "sqlite:") == "" {
			return errors.New("sqlite: needs a file path, as sqlite:plantstore.db")
		}
	case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		if _, err := url.Parse(v); err != nil {
			return errors.New("not a valid URL")
		}
	default:
		return errors.New("must start with sqlite:, postgres:// or postgresql://")
	}
	c.DatabaseURL = v
	return nil
}

func parseJWKSURL(c *Config, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("must be an http:// or https:// URL")
	}
	c.JWKSURL = v
	return nil
}

func parseMaxBody(c *Config, v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > 64<<20 {
		return errors.New("must be a whole number of bytes from 1 to 67108864")
	}
	c.MaxBodyBytes = n
	return nil
}

func parseLogLevel(c *Config, v string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		return errors.New("must be debug, info, warn or error")
	}
	c.LogLevel = l
	return nil
}

// hasKey reports whether any token verification key is configured.
func (c *Config) hasKey() bool {
	return c.JWTSecretFile != "" || c.JWTPublicKeyFile != "" || c.JWKSURL != ""
}
