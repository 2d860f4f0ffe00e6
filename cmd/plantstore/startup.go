package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/plantstore/plantstore/adapters/postgres"
	"github.com/plantstore/plantstore/adapters/tracing"
	"github.com/plantstore/plantstore/cmd/plantstore/internal/settings"
)

// startup is what serve starts with, checked and resolved before anything
// is opened: every setting, with the values serve derives (an auto size,
// the development secret) made what they come to, the tracing settings and
// the Go runtime's.
type startup struct {
	cfg    *config
	traces *tracing.Settings
	gc     runtimeSetting
	memory runtimeSetting
	// dev is serve --dev without a configured key: the service signs with
	// the development secret, created on first use.
	dev bool
	// values are every value serve uses, in the order settings prints them.
	values []shown
}

// shown is one value as serve uses it, for `plantstore settings` and the
// start-up line: secrets masked, with a note that starts with where it came
// from (default, environment or the flag that set it).
type shown struct {
	name, value, note string
}

// errNoKey is serve's refusal to start without a way to verify tokens.
var errNoKey = errors.New("no token key configured: set PLANTSTORE_JWT_SECRET_FILE, PLANTSTORE_JWT_PUBLIC_KEY_FILE or PLANTSTORE_JWKS_URL, or run `plantstore serve --dev` for development")

// prepare loads, checks and resolves what serve would start with, for
// command, serve or settings. It is the one place where serve's
// configuration is checked, so that `plantstore settings` refuses exactly
// what serve refuses, with the same line, and shows exactly what serve would
// use. It checks the configuration alone: what serve opens (the key files,
// the JWKS, the store, the listeners) is checked when serve opens it.
func prepare(command string, args []string, getenv func(string) (string, bool), usage io.Writer) (*startup, error) {
	cfg := &config{}
	set := cfg.settings()
	if err := set.Load(command, args, getenv, usage); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(usage, "\n"+runtimeHelp+"\n"+tracing.Help)
		}
		return nil, err
	}
	traces, tracingValues, err := tracing.Resolve(getenv, buildVersion())
	if err != nil {
		return nil, err
	}
	gc, err := gcPercent(getenv)
	if err != nil {
		return nil, err
	}
	memory, err := memoryLimit(getenv, cfg.Store.DatabaseURL.sqlitePath() != "")
	if err != nil {
		return nil, err
	}
	webhooks, err := cfg.Webhook.enabled()
	if err != nil {
		return nil, err
	}
	st := &startup{cfg: cfg, traces: traces, gc: gc, memory: memory}
	if !cfg.Auth.hasKey() {
		if !cfg.Core.Dev {
			return nil, errNoKey
		}
		st.dev = true
		cfg.Auth.SecretFile = devSecretPath
	}
	derived := cfg.resolvePool()
	unused := cfg.unused(webhooks, st.dev)
	for _, v := range set.Values() {
		s := shown{v.Env, v.Value, v.Origin}
		if d, ok := derived[v.Env]; ok {
			s.value, s.note = d.value, v.Origin+d.note
		}
		switch {
		case v.Env == "PLANTSTORE_WEBHOOK_YIELD_AT" && v.Value == "auto":
			s.value = strconv.Itoa(int(cfg.Webhook.YieldAt))
			s.note = fmt.Sprintf("%s auto: 8 × GOMAXPROCS %d", v.Origin, runtime.GOMAXPROCS(0))
		case v.Env == "PLANTSTORE_MAX_CONNECTIONS_PER_CLIENT":
			adm := cfg.API.admission()
			s.value = strconv.Itoa(adm.PerClient)
			switch {
			case v.Value == "auto":
				s.note = fmt.Sprintf("%s auto: a quarter of PLANTSTORE_MAX_CONNECTIONS %d", v.Origin, adm.MaxConnections)
			case int(cfg.API.MaxConnectionsPerClient) > adm.MaxConnections:
				s.note = v.Origin + "; cut to PLANTSTORE_MAX_CONNECTIONS"
			}
		case v.Env == "PLANTSTORE_JWT_SECRET_FILE" && st.dev:
			s.value, s.note = devSecretPath, "--dev: the development secret, created on first use; never in production"
		}
		if why, ok := unused[v.Env]; ok {
			s.note += "; not used: " + why
		}
		st.values = append(st.values, s)
	}
	st.values = append(st.values, maxProcs(getenv), gc.shown, memory.shown)
	for _, v := range tracingValues {
		st.values = append(st.values, shown{v.Name, v.Value, v.Note})
	}
	return st, nil
}

// resolvePool sets the PostgreSQL pool's auto sizes to what they come to,
// as the store would set them, and returns those values with how they were
// derived.
func (c *config) resolvePool() map[string]shown {
	derived := map[string]shown{}
	if c.Postgres.MaxOpenConns == 0 {
		c.Postgres.MaxOpenConns = poolSize(postgres.DefaultMaxOpenConns())
		derived["PLANTSTORE_DB_MAX_OPEN_CONNS"] = shown{
			value: strconv.Itoa(int(c.Postgres.MaxOpenConns)),
			note:  fmt.Sprintf(" auto: max(%d, 2 × GOMAXPROCS %d)", postgres.MinMaxOpenConns, runtime.GOMAXPROCS(0)),
		}
	}
	// database/sql keeps no more idle connections than may be open.
	switch idle := c.Postgres.MaxIdleConns; {
	case idle == 0:
		derived["PLANTSTORE_DB_MAX_IDLE_CONNS"] = shown{value: strconv.Itoa(int(c.Postgres.MaxOpenConns)), note: " auto: as many as may be open"}
		c.Postgres.MaxIdleConns = c.Postgres.MaxOpenConns
	case idle > c.Postgres.MaxOpenConns:
		derived["PLANTSTORE_DB_MAX_IDLE_CONNS"] = shown{value: strconv.Itoa(int(c.Postgres.MaxOpenConns)), note: "; cut to PLANTSTORE_DB_MAX_OPEN_CONNS, as database/sql does"}
		c.Postgres.MaxIdleConns = c.Postgres.MaxOpenConns
	}
	return derived
}

// unused names the settings serve would not use with c, and why.
func (c *config) unused(webhooks, dev bool) map[string]string {
	unused := map[string]string{}
	if c.Store.DatabaseURL.sqlitePath() != "" {
		for _, st := range settings.New(envPrefix, &postgresSettings{}).Settings() {
			unused[st.Env] = "the store is SQLite"
		}
	}
	if !webhooks {
		for _, st := range settings.New(envPrefix, &webhookSettings{}).Settings() {
			if !slices.Contains([]string{"PLANTSTORE_WEBHOOK_URLS", "PLANTSTORE_WEBHOOK_SECRET_FILE"}, st.Env) {
				unused[st.Env] = "no webhook receivers"
			}
		}
	}
	if c.Auth.JWKSURL == "" {
		unused["PLANTSTORE_JWKS_REFRESH"] = "no PLANTSTORE_JWKS_URL"
	}
	if c.Core.Dev && !dev {
		unused["PLANTSTORE_DEV"] = "a key is configured"
	}
	return unused
}

// startUpLine is the start-up log line's attributes: the version, the Go
// runtime's settings, tracing, and every setting's value in use.
func (st *startup) startUpLine() []any {
	attrs := []any{"version", buildVersion(), "gomaxprocs", runtime.GOMAXPROCS(0), "gogc", st.gc.value, "gomemlimit", st.memory.value, "tracing", st.traces.String()}
	for _, v := range st.values {
		if strings.HasPrefix(v.name, envPrefix) {
			attrs = append(attrs, v.name, v.value)
		}
	}
	return attrs
}

// runtimeHelp is the section of serve's help on the Go runtime's settings,
// which are environment variables only.
const runtimeHelp = `Go runtime (environment variables only):
  GOGC        garbage collection target, a percentage or off (default 400, where Go's own is 100)
  GOMEMLIMIT  soft memory limit, as 96MiB (default 3/4 of the container's memory limit, or of 64MiB without one)
  GOMAXPROCS  cores used (default the CPUs the process may use); the auto settings grow with it
`
