package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/plantstore/plantstore/client/internal/oapi"
)

// AnyETag stands for any state of a plant that exists: IfMatch(AnyETag)
// holds when the plant exists, IfNoneMatch(AnyETag) when it does not.
const AnyETag = "*"

// Condition makes a call conditional on the plant's stored state (RFC 9110
// §13). Make one with IfMatch or IfNoneMatch. A call may take several; each
// is sent as it is, so that the service, not the client, decides which it
// honours.
//
// What the service honours (PRODUCT.md §10): both on Change, Delete and
// Get, IfMatch first. On Change and Delete it checks them atomically with
// the write and answers ErrPreconditionFailed, changing nothing, when one
// does not hold. On Get, an IfMatch that does not hold answers
// ErrPreconditionFailed, and an IfNoneMatch that matches answers
// ErrNotModified instead of the plant.
type Condition struct {
	header string
	etags  []string
}

// IfMatch holds when the plant's ETag is one of etags (Plant.ETag values)
// or etags is AnyETag: "change or delete it only if nobody else has since I
// read it".
func IfMatch(etags ...string) Condition { return Condition{header: "If-Match", etags: etags} }

// IfNoneMatch holds when the plant's ETag is none of etags, or etags is
// AnyETag and there is no plant: on Get, "send it only if it changed".
func IfNoneMatch(etags ...string) Condition {
	return Condition{header: "If-None-Match", etags: etags}
}

// conditionEditors are the request editors that send conds, or an error
// that says which is malformed: a Condition without ETags, an ETag that is
// not a quoted string, or AnyETag among others, in one Condition or in
// several of one header (the service reads a header's lines as one list,
// and refuses "*" in a list). Nothing is sent then.
func conditionEditors(conds []Condition) ([]oapi.RequestEditorFn, error) {
	if len(conds) == 0 {
		return nil, nil
	}
	tags, star := map[string]int{}, map[string]bool{}
	for _, c := range conds {
		if err := c.check(); err != nil {
			return nil, err
		}
		tags[c.header] += len(c.etags)
		star[c.header] = star[c.header] || c.etags[0] == AnyETag
		if star[c.header] && tags[c.header] > 1 {
			return nil, fmt.Errorf("plantstore: %s: %q with other ETags", c.header, AnyETag)
		}
	}
	return []oapi.RequestEditorFn{func(_ context.Context, req *http.Request) error {
		for _, c := range conds {
			req.Header.Add(c.header, strings.Join(c.etags, ", "))
		}
		return nil
	}}, nil
}

func (c Condition) check() error {
	if c.header == "" {
		return errors.New("plantstore: a Condition not made by IfMatch or IfNoneMatch")
	}
	if len(c.etags) == 0 {
		return fmt.Errorf("plantstore: %s without an ETag", c.header)
	}
	for _, e := range c.etags {
		if e == AnyETag && len(c.etags) > 1 {
			return fmt.Errorf("plantstore: %s: %q with other ETags", c.header, AnyETag)
		}
		if e != AnyETag && !isETag(e) {
			return fmt.Errorf("plantstore: %s: %q is not an ETag: want a quoted string such as a Plant's ETag", c.header, e)
		}
	}
	return nil
}

// isETag reports whether s is an entity tag, strong or weak (RFC 9110
// §8.8.3): "..." or W/"..." without quotes, spaces or controls inside.
func isETag(s string) bool {
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for _, b := range []byte(s[1 : len(s)-1]) {
		if b == '"' || b <= ' ' || b == 0x7f {
			return false
		}
	}
	return true
}
