// Package settings binds typed settings structs to command-line flags and
// environment variables. Each module of the service declares its settings
// as a struct whose fields carry a tag; a Set of those structs is the one
// definition that flags, variables, --help, the masked start-up line and
// `plantstore settings` all read, so a new setting is one field in the module
// that uses it.
//
// A field takes part when it has a flag tag:
//
//	Addr string `flag:"addr" default:":8080" help:"API listener address"`
//
// Its variable is the Set's prefix and the flag in capitals, - becoming _
// (PLANTSTORE_ADDR). Other tags: default (parsed like any value; absent
// means none), secret ("url": mask a URL's password; "urls": mask the password and
// the query values of each URL of a comma-separated list; "true": mask the
// whole value), empty:"off" (a variable set to "" sets the empty value, turning a
// check off, where for other settings it counts as unset), and
// check:"positive" or check:"nonnegative" for numbers and durations, and
// check:"atleast:<duration>" for durations.
// Fields are strings, bools, ints, durations, comma-separated []string, or
// any type whose pointer implements encoding.TextUnmarshaler, whose error
// says what a value must be. A command that reads some of the settings
// alone binds them with Set.Only.
package settings

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Set is the settings of a command: fields of structs bound to flags and
// variables.
type Set struct {
	prefix string
	fields []*Setting // every bound field
	// taken are the settings the command reads, every field but for a Set
	// from Only: the others keep their defaults.
	taken []*Setting
}

// New binds the tagged fields of each struct (given by pointer) under
// prefix. A malformed tag or a default that does not parse is a programming
// error: it panics.
func New(prefix string, structs ...any) *Set {
	s := &Set{prefix: prefix}
	for _, p := range structs {
		v := reflect.ValueOf(p)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			panic(fmt.Sprintf("settings: %T is not a pointer to a struct", p))
		}
		s.bind(v.Elem())
	}
	return s
}

func (s *Set) bind(v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, ok := f.Tag.Lookup("flag")
		if !ok {
			continue
		}
		st := &Setting{
			Flag:     name,
			Env:      s.prefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_")),
			Default:  f.Tag.Get("default"),
			Help:     f.Tag.Get("help"),
			secret:   f.Tag.Get("secret"),
			emptyOff: f.Tag.Get("empty") == "off",
			check:    f.Tag.Get("check"),
			value:    v.Field(i),
		}
		if _, dup := s.Lookup(st.Env); dup {
			panic("settings: " + st.Env + " is bound twice")
		}
		if err := parseInto(reflect.New(st.value.Type()).Elem(), st.Default, st.check); st.Default != "" && err != nil {
			panic(fmt.Sprintf("settings: default of %s: %v", st.Env, err))
		}
		s.fields = append(s.fields, st)
		s.taken = append(s.taken, st)
	}
}

// Only is the Set of a command that reads some of the settings alone, named
// by their flags: its flags, variables, help and values are those; every
// other field takes its default, whatever the environment says. A flag that
// names no setting is a programming error: it panics.
func (s *Set) Only(flags ...string) *Set {
	only := &Set{prefix: s.prefix, fields: s.fields}
	for _, name := range flags {
		st, ok := s.lookupFlag(name)
		if !ok {
			panic("settings: no setting has the flag " + name)
		}
		only.taken = append(only.taken, st)
	}
	return only
}

// Settings returns every setting the command reads, in the order the
// structs declare them (or Only names them).
func (s *Set) Settings() []*Setting { return s.taken }

// Lookup finds the setting a variable sets.
func (s *Set) Lookup(env string) (*Setting, bool) {
	for _, st := range s.taken {
		if st.Env == env {
			return st, true
		}
	}
	return nil, false
}

// Load sets every field to its default, then to its variable, then to its
// flag in args: a flag wins. The first bad value is the error, one line that
// names the setting. With --help, the usage goes to usage and the error is
// flag.ErrHelp.
func (s *Set) Load(command string, args []string, getenv func(string) (string, bool), usage io.Writer) error {
	rest, err := s.Parse(command, args, getenv, usage, nil)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("unexpected argument %q", rest[0])
	}
	return err
}

// Parse is Load for a command that has flags of its own, which own adds to
// the flag set, and arguments after its flags, which it returns.
func (s *Set) Parse(command string, args []string, getenv func(string) (string, bool), usage io.Writer, own func(*flag.FlagSet)) ([]string, error) {
	for _, st := range s.fields {
		st.value.SetZero()
		st.given, st.origin = "", OriginDefault
		if st.Default != "" {
			_ = st.set(st.Default)
		}
	}
	for _, st := range s.taken {
		if v, ok := getenv(st.Env); ok && (v != "" || st.emptyOff) {
			if err := st.set(v); err != nil {
				return nil, fmt.Errorf("%s=%q: %w", st.Env, st.Masked(v), err)
			}
			st.origin = OriginEnvironment
		}
	}
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned as one line, not with the usage
	fs.Usage = func() {}
	if own != nil {
		own(fs)
	}
	// A refused secret's value is named masked, not as the flag package
	// would quote it.
	var refused error
	for _, st := range s.taken {
		set := func(value string) error {
			err := st.set(value)
			if err != nil && st.secret != "" {
				refused = fmt.Errorf("invalid value %q for flag -%s: %w", st.Masked(value), st.Flag, err)
			}
			if err == nil {
				st.origin = "--" + st.Flag
			}
			return err
		}
		if st.value.Kind() == reflect.Bool {
			fs.BoolFunc(st.Flag, st.Help, set) // works without a value, as --dev
		} else {
			fs.Func(st.Flag, st.Help, set)
		}
	}
	if err := fs.Parse(args); err != nil {
		if refused != nil {
			return nil, refused
		}
		if errors.Is(err, flag.ErrHelp) {
			if own != nil {
				fmt.Fprintf(usage, "Flags of plantstore %s:\n", command)
				fs.VisitAll(func(f *flag.Flag) {
					if _, isSetting := s.lookupFlag(f.Name); !isSetting {
						WriteFlag(usage, f.Name, "", f.DefValue, f.Usage)
					}
				})
				fmt.Fprintln(usage)
			}
			s.Usage(usage, command)
		}
		return nil, err
	}
	return fs.Args(), nil
}

func (s *Set) lookupFlag(name string) (*Setting, bool) {
	for _, st := range s.fields {
		if st.Flag == name {
			return st, true
		}
	}
	return nil, false
}

// Usage writes the help of a command that takes these settings.
func (s *Set) Usage(w io.Writer, command string) {
	fmt.Fprintf(w, "Usage: plantstore %s [flags]\n\n%s\n\n", command, EveryFlagHasAVariable)
	for _, st := range s.taken {
		WriteFlag(w, st.Flag, st.Env, st.Default, st.Help)
	}
}

// EveryFlagHasAVariable is what the help of a command says of its flags.
const EveryFlagHasAVariable = "Every flag can also be set by its environment variable; a flag wins."

// WriteFlag writes one flag of a command's help: its name, its variable
// when it has one, its default ("none" when empty) and what it is for. Every
// command's help lists its flags so.
func WriteFlag(w io.Writer, name, env, def, help string) {
	if def == "" {
		def = "none"
	}
	if env != "" {
		env += ", "
	}
	fmt.Fprintf(w, "  --%s  (%sdefault %s)\n      %s\n", name, env, def, help)
}

// Where a setting's value came from.
const (
	OriginDefault     = "default"
	OriginEnvironment = "environment"
	// A flag is named as given: "--addr".
)

// Value is one setting's value as loaded: masked, and where it came from.
type Value struct {
	Env, Value, Origin string
}

// Values are the values of the settings the command reads, as given,
// secrets masked, in order.
func (s *Set) Values() []Value {
	values := make([]Value, 0, len(s.taken))
	for _, st := range s.taken {
		values = append(values, Value{Env: st.Env, Value: st.Masked(st.given), Origin: st.origin})
	}
	return values
}

// LogAttrs is every setting's value as given, secrets masked, as attributes
// of a log line.
func (s *Set) LogAttrs() []any {
	attrs := make([]any, 0, 2*len(s.taken))
	for _, v := range s.Values() {
		attrs = append(attrs, v.Env, v.Value)
	}
	return attrs
}
