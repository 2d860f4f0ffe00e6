package httpapi

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestListQueryReadsItsThreeParameters(t *testing.T) {
	fern, _ := domain.ParseTag("fern & moss")
	tests := map[string]application.ListQuery{
		"":                           {Limit: 100},
		"limit=1":                    {Limit: 1},
		"limit=1000":                 {Limit: 1000},
		"after=-9223372036854775808": {Limit: 100, After: math.MinInt64, HasAfter: true},
		"after=0&limit=7":            {Limit: 7, After: 0, HasAfter: true},
		"tag=fern%20%26%20moss":      {Limit: 100, Tag: fern},
		"tag=fern+%26+moss&&":        {Limit: 100, Tag: fern},
		"l%69mit=5":                  {Limit: 5},
	}
	for raw, want := range tests {
		got, err := listQuery(raw)
		if err != nil || got != want {
			t.Errorf("listQuery(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
}

func TestListQueryNamesEveryBadParameter(t *testing.T) {
	tests := map[string]string{
		"limit=0":                   "limit: must be a whole number between 1 and 1000",
		"limit=1001":                "limit: must be a whole number between 1 and 1000",
		"limit=01":                  "limit: must be a whole number between 1 and 1000",
		"limit=+5":                  "limit: must be a whole number between 1 and 1000",
		"limit=5.0":                 "limit: must be a whole number between 1 and 1000",
		"limit=":                    "limit: must be a whole number between 1 and 1000",
		"limit":                     "limit: must be a whole number between 1 and 1000",
		"limit=99999999999999999":   "limit: must be a whole number between 1 and 1000",
		"after=07":                  "after: must be a decimal integer: an optional -, then digits without leading zeros",
		"after=9223372036854775808": "after: must be between -9223372036854775808 and 9223372036854775807",
		"tag=":                      "tag: must not be empty",
		"tag=%20":                   "tag: must not be only white space",
		"tag=a%00":                  "tag: must not contain control characters",
		"tag=%zz":                   "tag: must be correctly percent-encoded",
		"%zz=1":                     "query: must be correctly percent-encoded",
		"limit=5&limit=5":           "limit: must be given at most once",
		"limit=0&limit=5":           "limit: must be a whole number between 1 and 1000; limit: must be given at most once",
		"color=red&color=blue":      "color: unknown query parameter",
		"=1":                        "query: a parameter has no name",
		"offset=10":                 "offset: unknown query parameter",
		"Limit=10":                  "Limit: unknown query parameter",
		"limit=0&after=x&color=red": "limit: must be a whole number between 1 and 1000; " +
			"after: must be a decimal integer: an optional -, then digits without leading zeros; color: unknown query parameter",
		strings.Repeat("k", 100) + "=1": strings.Repeat("k", 64) + "…: unknown query parameter",
	}
	for raw, want := range tests {
		_, err := listQuery(raw)
		if err == nil || err.Error() != want || !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("listQuery(%.40q) = %v; want %q", raw, err, want)
		}
	}
}

func TestNextLinkKeepsLimitAndTag(t *testing.T) {
	tag, _ := domain.ParseTag("a b&c/é>")
	tests := []struct {
		q    application.ListQuery
		last domain.ID
		want string
	}{
		{application.ListQuery{Limit: 100}, 42, `</plants?limit=100&after=42>; rel="next"`},
		{application.ListQuery{Limit: 3, After: 1, HasAfter: true}, -7, `</plants?limit=3&after=-7>; rel="next"`},
		{application.ListQuery{Limit: 2, Tag: tag}, 9, `</plants?limit=2&after=9&tag=a%20b%26c%2F%C3%A9%3E>; rel="next"`},
	}
	for _, tt := range tests {
		if got := nextLink(tt.q, tt.last); got != tt.want {
			t.Errorf("nextLink(%+v, %d) = %s; want %s", tt.q, tt.last, got, tt.want)
		}
		// The link reads back as the next page's query.
		raw := strings.TrimSuffix(strings.TrimPrefix(nextLink(tt.q, tt.last), "</plants?"), `>; rel="next"`)
		next, err := listQuery(raw)
		if err != nil || next.Limit != tt.q.Limit || next.Tag != tt.q.Tag || next.After != tt.last || !next.HasAfter {
			t.Errorf("link %s reads back as %+v, %v", raw, next, err)
		}
	}
}
