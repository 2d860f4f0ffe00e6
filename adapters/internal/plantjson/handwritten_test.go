package plantjson

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// The encoders this package replaced, kept only to prove that its output is
// byte for byte theirs and to measure it against them (impl=hand).

func handAppendPlant(buf []byte, p Plant) []byte {
	buf = append(buf, `{"name":`...)
	buf, _ = jsontext.AppendQuote(buf, p.Name)
	if p.Tag != "" {
		buf = append(buf, `,"tag":`...)
		buf, _ = jsontext.AppendQuote(buf, p.Tag)
	}
	return append(buf, '}')
}

func handAppendItem(buf []byte, it Item) []byte {
	buf = append(buf, `{"id":`...)
	buf = strconv.AppendInt(buf, it.ID, 10)
	buf = append(buf, `,"name":`...)
	buf, _ = jsontext.AppendQuote(buf, it.Name)
	if it.Tag != "" {
		buf = append(buf, `,"tag":`...)
		buf, _ = jsontext.AppendQuote(buf, it.Tag)
	}
	return append(buf, '}')
}

func handAppendList(buf []byte, items []Item) []byte {
	buf = append(buf, '[')
	for i, it := range items {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = handAppendItem(buf, it)
	}
	return append(buf, ']')
}
