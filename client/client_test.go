package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests hold what the client does on its own side: the options, the
// headers it sends, what it refuses before sending, and answers the
// service never gives but a proxy in front of it may. How it drives the
// served API, every operation and documented refusal, is tested against
// the real router in adapters/httpapi (client_*_test.go), since this
// package imports nothing of the service.

// recorder is a server that answers every request with status and body and
// keeps the requests' headers.
type recorder struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

func record(t *testing.T, status int, header http.Header, body string) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(r.Close)
	return r
}

// sent are the headers of the requests received so far.
func (r *recorder) sent() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// newClient is a client of url that sends the token "t" unless opts give
// another (of the token options, the last given is used).
func newClient(t *testing.T, url string, opts ...Option) *Client {
	t.Helper()
	c, err := New(url, append([]Option{WithToken("t")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewRefusesWhatCannotWork(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  string
		opts []Option
	}{
		{"no scheme", "localhost:8080", nil},
		{"another scheme", "ftp://localhost", nil},
		{"no host", "http://", nil},
		{"a relative URL", "/plants", nil},
		{"a query", "http://localhost:8080/?a=1", nil},
		{"not a URL", "http://local host", nil},
		{"no token", "http://localhost:8080", nil},
		{"no token, other options", "http://localhost:8080", []Option{WithUserAgent("inventory/1.2"), WithHTTPClient(&http.Client{})}},
		{"a nil option", "http://localhost:8080", []Option{WithToken("t"), nil}},
		{"an empty token", "http://localhost:8080", []Option{WithToken("")}},
		{"a nil token source", "http://localhost:8080", []Option{WithTokenSource(nil)}},
		{"a nil http client", "http://localhost:8080", []Option{WithHTTPClient(nil)}},
		{"an empty user agent", "http://localhost:8080", []Option{WithUserAgent("")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c, err := New(tc.url, tc.opts...); err == nil || c != nil || !strings.HasPrefix(err.Error(), "plantstore: ") {
				t.Fatalf("New(%q) = %v, %v; want an error", tc.url, c, err)
			}
		})
	}
}

// Without an *http.Client of the caller's, a request that gets no answer
// ends at DefaultTimeout; with one, the caller's settings hold.
func TestDefaultTimeout(t *testing.T) {
	hc, ok := newClient(t, "http://localhost:8080").api.Client.(*http.Client)
	if !ok || hc.Timeout != DefaultTimeout || DefaultTimeout != 30*time.Second {
		t.Fatalf("the default client is %#v; want an *http.Client with a %v time-out", hc, DefaultTimeout)
	}
	mine := &http.Client{}
	if got := newClient(t, "http://localhost:8080", WithHTTPClient(mine)).api.Client; got != mine {
		t.Fatalf("WithHTTPClient: the client sends with %#v", got)
	}
}

func TestEveryRequestCarriesTheUserAgentAndToken(t *testing.T) {
	srv := record(t, 204, nil, "")
	ctx := context.Background()
	_ = newClient(t, srv.URL).Delete(ctx, 1)
	_ = newClient(t, srv.URL, WithToken("t0"), WithUserAgent("inventory/1.2")).Delete(ctx, 1)
	tokens := []string{"t1", "t2"}
	rotating := newClient(t, srv.URL, WithTokenSource(func(context.Context) (string, error) {
		tok := tokens[0]
		tokens = tokens[1:]
		return tok, nil
	}))
	_ = rotating.Delete(ctx, 1)
	_ = rotating.Delete(ctx, 1)

	for i, want := range []struct{ ua, auth string }{
		{DefaultUserAgent, "Bearer t"},
		{"inventory/1.2", "Bearer t0"},
		{DefaultUserAgent, "Bearer t1"},
		{DefaultUserAgent, "Bearer t2"},
	} {
		h := srv.sent()[i]
		if h.Get("User-Agent") != want.ua || h.Get("Authorization") != want.auth {
			t.Errorf("request %d: User-Agent %q, Authorization %q; want %q, %q", i, h.Get("User-Agent"), h.Get("Authorization"), want.ua, want.auth)
		}
	}
}

// A token source that fails, or gives no token, fails the call with its
// error and nothing is sent.
func TestAFailingTokenSourceSendsNothing(t *testing.T) {
	srv := record(t, 204, nil, "")
	expired := errors.New("refresh token expired")
	for _, source := range []func(context.Context) (string, error){
		func(context.Context) (string, error) { return "", expired },
		func(context.Context) (string, error) { return "", nil },
	} {
		err := newClient(t, srv.URL, WithTokenSource(source)).Delete(context.Background(), 1)
		var apiErr *Error
		if err == nil || errors.As(err, &apiErr) || !strings.HasPrefix(err.Error(), "plantstore: ") {
			t.Errorf("Delete with a failing token source: %v", err)
		}
		if _, want := source(context.Background()); want != nil && !errors.Is(err, want) {
			t.Errorf("the error %v does not wrap the source's %v", err, want)
		}
	}
	if n := len(srv.sent()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// Conditions are sent as they are made, on every method that takes them,
// whether the service honours that pair yet or not (PRODUCT.md §10, v4).
func TestConditionsAreSentOnEveryMethod(t *testing.T) {
	const a, b = `"a"`, `W/"b"`
	plant := http.Header{"Content-Type": {"application/json"}, "ETag": {a}}
	srv := record(t, 200, plant, `{"id":1,"name":"Aloe"}`)
	del := record(t, 204, nil, "")
	ctx := context.Background()
	c, d := newClient(t, srv.URL), newClient(t, del.URL)
	calls := []func(...Condition) error{
		func(conds ...Condition) error { _, err := c.Get(ctx, 1, conds...); return err },
		func(conds ...Condition) error { _, err := c.Change(ctx, 1, Patch{}, conds...); return err },
		func(conds ...Condition) error { return d.Delete(ctx, 1, conds...) },
	}
	for i, call := range calls {
		if err := call(IfMatch(a, b), IfNoneMatch(AnyETag)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	sent := append(srv.sent(), del.sent()...)
	if len(sent) != 3 {
		t.Fatalf("%d requests", len(sent))
	}
	for i, h := range sent {
		if got := h.Values("If-Match"); len(got) != 1 || got[0] != `"a", W/"b"` {
			t.Errorf("request %d: If-Match %q", i, got)
		}
		if got := h.Values("If-None-Match"); len(got) != 1 || got[0] != "*" {
			t.Errorf("request %d: If-None-Match %q", i, got)
		}
	}
}

// A condition that cannot be what the caller meant is refused before
// anything is sent: a write guarded by nothing would overwrite silently.
func TestMalformedConditionsSendNothing(t *testing.T) {
	srv := record(t, 204, nil, "")
	c := newClient(t, srv.URL)
	for _, cond := range []Condition{
		IfMatch(),
		IfNoneMatch(),
		IfMatch(""),
		IfMatch("oHWlwy3amqwLe8DvEsFOaw"), // the quotes left out
		IfMatch(`"a b"`),
		IfMatch(AnyETag, `"a"`),
		{},
	} {
		if err := c.Delete(context.Background(), 1, cond); err == nil || !strings.HasPrefix(err.Error(), "plantstore: ") {
			t.Errorf("Delete with %+v: %v", cond, err)
		}
		if _, err := c.Get(context.Background(), 1, cond); err == nil {
			t.Errorf("Get with %+v: %v", cond, err)
		}
	}
	// "*" beside another ETag of the same header, in conditions of their own.
	for _, conds := range [][]Condition{
		{IfMatch(AnyETag), IfMatch(`"a"`)},
		{IfNoneMatch(`"a"`), IfMatch(`"b"`), IfNoneMatch(AnyETag)},
	} {
		if err := c.Delete(context.Background(), 1, conds...); err == nil || !strings.HasPrefix(err.Error(), "plantstore: ") {
			t.Errorf("Delete with %+v: %v", conds, err)
		}
	}
	if n := len(srv.sent()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// The merge patch sends exactly the members set: a removed tag as null.
func TestPatchJSON(t *testing.T) {
	for _, tc := range []struct {
		patch Patch
		want  string
	}{
		{Patch{}, `{}`},
		{Patch{}.SetName("Sage"), `{"name":"Sage"}`},
		{Patch{}.SetTag("herb"), `{"tag":"herb"}`},
		{Patch{}.RemoveTag(), `{"tag":null}`},
		{Patch{}.SetName("Sage").SetTag("herb").RemoveTag(), `{"name":"Sage","tag":null}`},
		{Patch{}.RemoveTag().SetTag("herb"), `{"tag":"herb"}`},
	} {
		got, err := tc.patch.MarshalJSON()
		if err != nil || string(got) != tc.want {
			t.Errorf("%+v: %s %v; want %s", tc.patch, got, err, tc.want)
		}
	}
	base := Patch{}.SetName("Sage")
	_ = base.RemoveTag()
	if got, _ := base.MarshalJSON(); string(got) != `{"name":"Sage"}` {
		t.Errorf("a Patch changed by a method called on a copy: %s", got)
	}
}

// An answer without the API's Error body, as a proxy in front of the
// service sends, is still an *Error with the status; Retry-After as an
// HTTP date counts from now.
func TestAnAnswerFromAProxyIsAnError(t *testing.T) {
	in := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	srv := record(t, 503, http.Header{"Content-Type": {"text/html"}, "Retry-After": {in}}, "<html>upstream down</html>")
	_, err := newClient(t, srv.URL).Get(context.Background(), 1)
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 503 || e.Code != 0 || e.Message != "Service Unavailable" || e.RequestID != "" ||
		e.RetryAfter < 80*time.Second || e.RetryAfter > 91*time.Second || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("got %#v", err)
	}
	if err.Error() != "plantstore: 503 Service Unavailable" {
		t.Errorf("Error() %q", err.Error())
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"1":                             time.Second,
		"120":                           2 * time.Minute,
		"-1":                            0,
		"soon":                          0,
		"Wed, 25 Nov 2026 12:00:30 GMT": 30 * time.Second,
		"Wed, 25 Nov 2026 11:59:00 GMT": 0,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}

// A request that gets no answer fails with net/http's error, wrapped, and
// not an *Error; a cancelled context says so.
func TestNoAnswerIsNotAnAPIError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	_, err := newClient(t, srv.URL).Get(context.Background(), 1)
	var urlErr *url.Error
	var apiErr *Error
	if !errors.As(err, &urlErr) || errors.As(err, &apiErr) || !strings.HasPrefix(err.Error(), "plantstore: ") {
		t.Fatalf("to a closed port: %#v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newClient(t, record(t, 200, nil, "[]").URL).ListPage(ctx, ListOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("with a cancelled context: %v", err)
	}
}

// A success whose body is not what the API answers is an error, not a
// zero plant.
func TestAnUnreadableSuccessIsAnError(t *testing.T) {
	srv := record(t, 200, http.Header{"Content-Type": {"text/html"}}, "<html>captive portal</html>")
	c := newClient(t, srv.URL)
	if p, err := c.Get(context.Background(), 1); err == nil {
		t.Errorf("Get: %+v", p)
	}
	if p, err := c.ListPage(context.Background(), ListOptions{}); err == nil {
		t.Errorf("ListPage: %+v", p)
	}
}

func TestNextLink(t *testing.T) {
	for _, tc := range []struct {
		link   []string
		target string
		ok     bool
		err    bool
	}{
		{nil, "", false, false},
		{[]string{`</plants?limit=2&after=8>; rel="next"`}, "/plants?limit=2&after=8", true, false},
		{[]string{`</plants?after=8>;rel=next`}, "/plants?after=8", true, false},
		{[]string{`</a>; rel="prev", </b>; rel="next"`}, "/b", true, false},
		{[]string{`</a>; rel="prev"`, `</b>; title="x, y; z"; rel="last next"`}, "/b", true, false},
		{[]string{`</a>; rel="prev"`}, "", false, false},
		{[]string{`/plants?after=8; rel="next"`}, "", false, true},
		{[]string{`</plants?after=8; rel="next"`}, "", false, true},
	} {
		target, ok, err := nextLink(http.Header{"Link": tc.link})
		if target != tc.target || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("Link %q: %q %v %v; want %q %v, error %v", tc.link, target, ok, err, tc.target, tc.ok, tc.err)
		}
	}
}

// The next page's options are the link's; a link the client cannot follow
// faithfully, or that would walk the same page again, is an error.
func TestNextOptions(t *testing.T) {
	eight := int64(8)
	got, err := nextOptions("/plants?limit=2&after=9&tag=a%20%26%20b", ListOptions{After: &eight})
	if err != nil || got.PageSize != 2 || *got.After != 9 || got.Tag != "a & b" {
		t.Fatalf("%+v %v", got, err)
	}
	for _, link := range []string{
		"/plants?limit=2",                 // no after
		"/plants?after=8",                 // no progress
		"/plants?after=7",                 // backwards
		"/plants?after=9&after=10",        // repeated
		"/plants?after=9&cursor=x",        // unknown
		"/plants?after=nine",              // not an id
		"/plants?after=9&limit=two",       // not a number
		"/plants?after=9&tag=%zz",         // malformed
		"http://%zz/plants?after=9&tag=a", // not a URL
	} {
		if got, err := nextOptions(link, ListOptions{After: &eight}); err == nil {
			t.Errorf("%s: %+v", link, got)
		}
	}
}

// A list stops at the first page it cannot read, after yielding the error
// once; and a caller that stops early asks for no more pages.
func TestListStops(t *testing.T) {
	srv := record(t, 200, http.Header{"Content-Type": {"application/json"}, "Link": {`</plants?after=1>; rel="next"`}}, `[{"id":1,"name":"Aloe"}]`)
	c := newClient(t, srv.URL)
	var ids []int64
	var errs []error
	for p, err := range c.List(context.Background(), ListOptions{}) {
		ids, errs = append(ids, p.ID), append(errs, err)
	}
	// The second page links to after=1 again: no progress.
	if len(ids) != 2 || ids[0] != 1 || errs[0] != nil || errs[1] == nil || len(srv.sent()) != 2 {
		t.Fatalf("yielded %v %v after %d requests", ids, errs, len(srv.sent()))
	}
	for range c.List(context.Background(), ListOptions{}) {
		break
	}
	if n := len(srv.sent()); n != 3 {
		t.Fatalf("a list stopped after its first plant sent %d requests in all, want 3", n)
	}
}
