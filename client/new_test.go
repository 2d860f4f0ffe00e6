package client

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// A Client not made by New fails each call with an error that says to use
// New, rather than panic on a nil pointer; so does a nil *Client.
func TestTheZeroClientSaysUseNew(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]*Client{"zero": {}, "nil": nil} {
		var errs []error
		_, err := c.Create(ctx, NewPlant{ID: 1, Name: "Aloe"})
		errs = append(errs, err)
		_, err = c.Get(ctx, 1)
		errs = append(errs, err)
		_, err = c.Change(ctx, 1, Patch{})
		errs = append(errs, err)
		errs = append(errs, c.Delete(ctx, 1))
		_, err = c.ListPage(ctx, ListOptions{})
		errs = append(errs, err)
		for _, err := range c.List(ctx, ListOptions{}) {
			errs = append(errs, err)
		}
		for _, err := range c.Feed(FeedOptions{}).Events(ctx) {
			errs = append(errs, err)
		}
		if len(errs) != 7 {
			t.Fatalf("%s client: %d answers, want 7", name, len(errs))
		}
		for i, err := range errs {
			if err == nil || !strings.Contains(err.Error(), "use client.New") {
				t.Errorf("%s client, call %d: %v", name, i, err)
			}
		}
	}
}

// Option is opaque, as go doc shows it: an interface whose one method is
// unexported, so that only this package makes options and the signature
// of New names no unexported type.
func TestOptionIsOpaque(t *testing.T) {
	o := reflect.TypeFor[Option]()
	if o.Kind() != reflect.Interface || o.NumMethod() != 1 || o.Method(0).IsExported() {
		t.Fatalf("Option is %v with %d methods; want an interface of one unexported method", o.Kind(), o.NumMethod())
	}
}

// New without a token fails as it does with an empty one, saying how to
// give one: every operation of the API needs it.
func TestNewWantsAToken(t *testing.T) {
	_, err := New("http://localhost:8080", WithUserAgent("inventory/1.2"))
	if err == nil || err.Error() != "plantstore: New: no token: give WithToken or WithTokenSource" {
		t.Fatalf("New without a token: %v", err)
	}
	if _, err := New("http://localhost:8080", WithToken("")); err == nil {
		t.Fatal("New with an empty token succeeded")
	}
}
