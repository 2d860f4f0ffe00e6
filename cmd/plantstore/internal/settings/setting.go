package settings

import (
	"encoding"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Setting is one field bound to a flag and a variable.
type Setting struct {
	Flag, Env, Default, Help string

	secret   string
	emptyOff bool
	check    string
	value    reflect.Value
	given    string // the value as given, for the start-up line
	origin   string // where given came from: OriginDefault, OriginEnvironment or the flag
}

// set parses value into the field and remembers it.
func (st *Setting) set(value string) error {
	v := reflect.New(st.value.Type()).Elem()
	if err := parseInto(v, value, st.check); err != nil {
		return err
	}
	st.value.Set(v)
	st.given = value
	return nil
}

// Masked is value as the start-up line shows it: a URL's password, or a
// whole secret, hidden.
func (st *Setting) Masked(value string) string {
	switch {
	case value == "" || st.secret == "":
		return value
	case st.secret == "url":
		if u, err := url.Parse(value); err == nil && u.Scheme != "" {
			return maskedURL(u)
		}
		if !strings.Contains(value, "password=") {
			return value
		}
	case st.secret == "urls":
		return maskedURLList(value)
	}
	return "(masked)"
}

// maskedURLList is a comma-separated list of URLs with each one's password
// and its whole query hidden: a receiver's URL often carries its access
// token in the query. A token in the path stays visible.
func maskedURLList(value string) string {
	list := strings.Split(value, ",")
	for i, item := range list {
		if strings.TrimSpace(item) == "" {
			continue
		}
		u, err := url.Parse(strings.TrimSpace(item))
		if err != nil || u.Scheme == "" {
			list[i] = "(masked)"
			continue
		}
		if u.RawQuery != "" {
			u.RawQuery = "xxxxx"
		}
		list[i] = u.Redacted()
	}
	return strings.Join(list, ",")
}

// secretParameters are the query parameters of a database URL that carry a
// secret: lib/pq takes any connection parameter from the query string.
var secretParameters = []string{"password", "sslpassword"}

// maskedURL is u with the password of its user and of its query hidden.
func maskedURL(u *url.URL) string {
	q := u.Query()
	masked := false
	for _, name := range secretParameters {
		if q.Has(name) {
			q.Set(name, "xxxxx")
			masked = true
		}
	}
	if masked {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

var (
	durationType           = reflect.TypeFor[time.Duration]()
	unmarshalerType        = reflect.TypeFor[encoding.TextUnmarshaler]()
	errWholeNumber         = errors.New("must be a whole number")
	errPositive            = errors.New("must be a positive whole number")
	errDuration            = errors.New("must be a positive duration such as 500ms, 15s or 1m")
	errNonNegativeDuration = errors.New("must be a duration such as 0s, 500us or 2ms")
)

// parseInto parses s into v, which must be settable, under check.
func parseInto(v reflect.Value, s, check string) error {
	if v.Addr().Type().Implements(unmarshalerType) {
		return v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
	}
	switch {
	case v.Type() == durationType:
		d, err := time.ParseDuration(s)
		least, hasLeast := strings.CutPrefix(check, "atleast:")
		switch {
		case hasLeast:
			if bound, boundErr := time.ParseDuration(least); boundErr != nil || err != nil || d < bound {
				return fmt.Errorf("must be a duration of at least %s", least)
			}
		case check == "nonnegative" && (err != nil || d < 0):
			return errNonNegativeDuration
		case check != "nonnegative" && (err != nil || d <= 0):
			return errDuration
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(s)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("must be true or false")
		}
		v.SetBool(b)
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		switch {
		case check == "positive" && (err != nil || n <= 0):
			return errPositive
		case err != nil:
			return errWholeNumber
		}
		v.SetInt(n)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		var items []string
		for item := range strings.SplitSeq(s, ",") {
			if item = strings.TrimSpace(item); item == "" {
				return errors.New("must be a comma-separated list without empty items")
			}
			items = append(items, item)
		}
		v.Set(reflect.ValueOf(items))
	default:
		panic(fmt.Sprintf("settings: a field of type %s cannot be a setting", v.Type()))
	}
	return nil
}
