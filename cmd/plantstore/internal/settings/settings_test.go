package settings_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/cmd/plantstore/internal/settings"
)

// level is a value type with its own check, as modules declare them.
type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return errors.New("must be low or high")
	}
	return nil
}

type store struct {
	URL     string        `flag:"database-url" default:"sqlite:x.db" secret:"url" help:"the store"`
	Conns   int           `flag:"max-conns" default:"8" check:"positive" help:"pool size"`
	Wait    time.Duration `flag:"batch-wait" default:"200us" check:"nonnegative" help:"batch wait"`
	Timeout time.Duration `flag:"timeout" default:"5s" help:"query timeout"`
	Keep    time.Duration `flag:"keep" default:"1h" check:"atleast:1m" help:"how long to keep"`
	Ignored string        // no tag: not a setting
}

type other struct {
	Scope string   `flag:"scope" default:"plants:write" empty:"off" help:"scope"`
	Hooks []string `flag:"hook-urls" secret:"urls" help:"receivers"`
	Dev   bool     `flag:"dev" default:"false" help:"development"`
	Level level    `flag:"level" default:"low" help:"level"`
	Name  string   `flag:"name" help:"a name"`
}

func load(t *testing.T, env map[string]string, args ...string) (*store, *other, *settings.Set, error) {
	t.Helper()
	s, o := &store{}, &other{}
	set := settings.New("PS_", s, o)
	err := set.Load("serve", args, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
	return s, o, set, err
}

func TestDefaultsThenVariablesThenFlags(t *testing.T) {
	s, o, _, err := load(t, nil)
	if err != nil || s.URL != "sqlite:x.db" || s.Conns != 8 || s.Wait != 200*time.Microsecond || o.Scope != "plants:write" || o.Level != 1 || o.Hooks != nil || o.Dev {
		t.Fatalf("defaults: %+v %+v %v", s, o, err)
	}
	s, o, _, err = load(t, map[string]string{"PS_MAX_CONNS": "3", "PS_HOOK_URLS": "http://a, http://b", "PS_LEVEL": "high"},
		"--max-conns", "4", "--dev", "--batch-wait=0s")
	if err != nil || s.Conns != 4 || s.Wait != 0 || !o.Dev || o.Level != 2 || strings.Join(o.Hooks, "|") != "http://a|http://b" {
		t.Fatalf("a flag wins over its variable: %+v %+v %v", s, o, err)
	}
}

func TestAnEmptyVariableCountsAsUnsetUnlessItTurnsACheckOff(t *testing.T) {
	s, o, _, err := load(t, map[string]string{"PS_SCOPE": "", "PS_DATABASE_URL": "", "PS_NAME": ""})
	if err != nil || o.Scope != "" || s.URL != "sqlite:x.db" {
		t.Fatalf("got scope %q, url %q, %v", o.Scope, s.URL, err)
	}
}

func TestABadValueIsOneLineNamingTheSetting(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"PS_MAX_CONNS": "0"}, nil, `PS_MAX_CONNS="0": must be a positive whole number`},
		{map[string]string{"PS_TIMEOUT": "0s"}, nil, `PS_TIMEOUT="0s": must be a positive duration such as 500ms, 15s or 1m`},
		{map[string]string{"PS_BATCH_WAIT": "-1ms"}, nil, `PS_BATCH_WAIT="-1ms": must be a duration such as 0s, 500us or 2ms`},
		{map[string]string{"PS_KEEP": "59s"}, nil, `PS_KEEP="59s": must be a duration of at least 1m`},
		{map[string]string{"PS_KEEP": "soon"}, nil, `PS_KEEP="soon": must be a duration of at least 1m`},
		{map[string]string{"PS_LEVEL": "medium"}, nil, `PS_LEVEL="medium": must be low or high`},
		{map[string]string{"PS_HOOK_URLS": "http://a,,http://b"}, nil, `PS_HOOK_URLS="http://a,,http://b": must be a comma-separated list without empty items`},
		{map[string]string{"PS_DEV": "yes please"}, nil, `PS_DEV="yes please": must be true or false`},
		{map[string]string{"PS_DATABASE_URL": "postgres://u:hunter2@db/x?x=%zz"}, []string{"--max-conns", "x"}, `invalid value "x" for flag -max-conns: must be a positive whole number`},
		{nil, []string{"--hook-urls", "http://a?token=s3cret,,http://b"}, `invalid value "http://a?xxxxx,,http://b" for flag -hook-urls: must be a comma-separated list without empty items`},
		{nil, []string{"--nope"}, "flag provided but not defined: -nope"},
		{nil, []string{"extra"}, `unexpected argument "extra"`},
	} {
		_, _, _, err := load(t, tt.env, tt.args...)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v %v: got %v, want %s", tt.env, tt.args, err, tt.want)
		}
	}
}

func TestHelpListsEverySettingWithItsVariableAndDefault(t *testing.T) {
	var out bytes.Buffer
	set := settings.New("PS_", &store{}, &other{})
	err := set.Load("serve", []string{"--help"}, func(string) (string, bool) { return "", false }, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{
		"--database-url  (PS_DATABASE_URL, default sqlite:x.db)\n      the store\n",
		"--hook-urls  (PS_HOOK_URLS, default none)\n      receivers\n",
		"--dev  (PS_DEV, default false)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
	if got := len(set.Settings()); got != 10 || strings.Contains(out.String(), "Ignored") {
		t.Errorf("%d settings; want the 10 tagged fields only", got)
	}
}

func TestTheStartUpLineMasksPasswords(t *testing.T) {
	for url, want := range map[string]string{
		"postgres://plants:hunter2@db:5432/plants":                               "postgres://plants:xxxxx@db:5432/plants",
		"host=db user=plants password=hunter2":                                   "(masked)",
		"postgres://plants@db/plants?sslmode=disable&password=hunter2":           "postgres://plants@db/plants?password=xxxxx&sslmode=disable",
		"postgres://plants:a@db/plants?sslpassword=hunter2&password=hunter2&x=1": "postgres://plants:xxxxx@db/plants?password=xxxxx&sslpassword=xxxxx&x=1",
		"sqlite:plants.db": "sqlite:plants.db",
	} {
		_, _, set, err := load(t, map[string]string{"PS_DATABASE_URL": url})
		if err != nil {
			t.Fatal(err)
		}
		attrs := set.LogAttrs()
		if attrs[0] != "PS_DATABASE_URL" || attrs[1] != want {
			t.Errorf("%s logged as %v", url, attrs[:2])
		}
	}
}

func TestTheStartUpLineMasksReceiverCredentials(t *testing.T) {
	_, _, set, err := load(t, map[string]string{"PS_HOOK_URLS": "https://hooks.example/in?token=s3cret&v=2,http://u:pw@127.0.0.1:8090/?S3CRET,https://plain.example/x"})
	if err != nil {
		t.Fatal(err)
	}
	attrs := set.LogAttrs()
	want := "https://hooks.example/in?xxxxx,http://u:xxxxx@127.0.0.1:8090/?xxxxx,https://plain.example/x"
	for i := 0; i+1 < len(attrs); i += 2 {
		if attrs[i] == "PS_HOOK_URLS" {
			if attrs[i+1] != want {
				t.Errorf("receivers logged as %v; want %s", attrs[i+1], want)
			}
			return
		}
	}
	t.Fatalf("no PS_HOOK_URLS in %v", attrs)
}

func TestLookupFindsASettingByItsVariable(t *testing.T) {
	s := &store{}
	set := settings.New("PS_", s)
	st, ok := set.Lookup("PS_MAX_CONNS")
	if !ok || st.Default != "8" || st.Flag != "max-conns" {
		t.Fatalf("lookup: %+v %v", st, ok)
	}
	if _, ok := set.Lookup("PS_NOPE"); ok {
		t.Fatal("found a setting that does not exist")
	}
}

func TestMistakesInTheDeclarationsPanic(t *testing.T) {
	type badDefault struct {
		N int `flag:"n" default:"many"`
	}
	type unsupported struct {
		F float64 `flag:"f" default:"1"`
	}
	for name, structs := range map[string][]any{
		"bad default":  {&badDefault{}},
		"twice":        {&store{}, &store{}},
		"not a struct": {new(int)},
		"unsupported":  {&unsupported{}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			settings.New("PS_", structs...)
		}()
	}
}

// Values say where each value came from: its default, its variable or its
// flag.
func TestValuesSayWhereEachCameFrom(t *testing.T) {
	_, _, set, err := load(t, map[string]string{"PS_MAX_CONNS": "3", "PS_LEVEL": "high"}, "--level", "low", "--name=x")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]settings.Value{}
	for _, v := range set.Values() {
		got[v.Env] = v
	}
	for env, want := range map[string]settings.Value{
		"PS_DATABASE_URL": {"PS_DATABASE_URL", "sqlite:x.db", settings.OriginDefault},
		"PS_MAX_CONNS":    {"PS_MAX_CONNS", "3", settings.OriginEnvironment},
		"PS_LEVEL":        {"PS_LEVEL", "low", "--level"},
		"PS_NAME":         {"PS_NAME", "x", "--name"},
		"PS_HOOK_URLS":    {"PS_HOOK_URLS", "", settings.OriginDefault},
	} {
		if got[env] != want {
			t.Errorf("%s: %+v; want %+v", env, got[env], want)
		}
	}
}

// A Set from Only reads the settings it names alone: their flags, their
// variables and their help; the other fields take their defaults whatever
// the environment says, and their flags are unknown.
func TestOnlyReadsTheNamedSettings(t *testing.T) {
	s, o := &store{}, &other{}
	set := settings.New("PS_", s, o).Only("database-url", "level")
	env := map[string]string{"PS_DATABASE_URL": "sqlite:y.db", "PS_MAX_CONNS": "not a number", "PS_LEVEL": "high"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if err := set.Load("migrate", nil, getenv, io.Discard); err != nil {
		t.Fatal(err)
	}
	if s.URL != "sqlite:y.db" || o.Level != 2 || s.Conns != 8 || o.Scope != "plants:write" {
		t.Errorf("got %+v %+v; want the named settings from the environment, the others their defaults", s, o)
	}
	if err := set.Load("migrate", []string{"--max-conns", "3"}, getenv, io.Discard); err == nil || err.Error() != "flag provided but not defined: -max-conns" {
		t.Errorf("a flag Only left out: %v", err)
	}
	var help bytes.Buffer
	if err := set.Load("migrate", []string{"--help"}, getenv, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	if got := strings.Count(help.String(), "\n  --"); got != 2 || !strings.Contains(help.String(), "--level  (PS_LEVEL, default low)") {
		t.Errorf("help of the named settings alone:\n%s", help.String())
	}
	if len(set.Settings()) != 2 || len(set.Values()) != 2 {
		t.Errorf("%d settings, %d values; want the 2 named", len(set.Settings()), len(set.Values()))
	}
	defer func() {
		if recover() == nil {
			t.Error("Only of a flag no setting has did not panic")
		}
	}()
	settings.New("PS_", &store{}).Only("nope")
}
