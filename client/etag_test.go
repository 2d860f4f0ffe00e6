package client

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// A listed plant's ETag is derived as docs/openapi.yaml states it, from
// the item's bytes as served: the document's example gives its ETag, and
// the same plant encoded otherwise (an escape, another order of members)
// has another one, which a client that decoded and encoded again would get
// wrong. adapters/httpapi holds it to the ETag GET answers.
func TestListedETagIsTheDocumentsRule(t *testing.T) {
	doc, err := os.ReadFile("../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	example := regexp.MustCompile("For the item\\s+`([^`]+)`\\s+that is\\s+`([^`]+)`").FindStringSubmatch(string(doc))
	if example == nil {
		t.Fatal("docs/openapi.yaml gives no example of a listed plant's ETag (\"For the item `...` that is `...`\")")
	}
	item := strings.Join(strings.Fields(example[1]), " ")
	p, err := listed([]byte(item))
	if err != nil || p.ETag != example[2] || p.ID != 7 {
		t.Fatalf("the item %s: %+v %v; the document says its ETag is %s", item, p, err, example[2])
	}
	for _, other := range []string{
		`{"id":7,"name":"Monstera\u0020deliciosa","tag":"aroid"}`,
		`{"name":"Monstera deliciosa","id":7,"tag":"aroid"}`,
		`{"id": 7, "name": "Monstera deliciosa", "tag": "aroid"}`,
	} {
		q, err := listed([]byte(other))
		if err != nil || q.ID != p.ID || q.Name != p.Name || q.Tag != p.Tag || q.ETag == p.ETag || !isETag(q.ETag) {
			t.Errorf("%s: %+v %v; want the same plant with an ETag of its own", other, q, err)
		}
	}
}
