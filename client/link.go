package client

import (
	"fmt"
	"net/http"
	"strings"
)

// nextLink is the target of the rel="next" link among h's Link values
// (RFC 8288), and whether there is one. A Link value it cannot read is an
// error: taking it for the last page would cut the list short.
func nextLink(h http.Header) (string, bool, error) {
	for _, v := range h.Values("Link") {
		rest := v
		for {
			rest = strings.TrimLeft(rest, " \t,")
			if rest == "" {
				break
			}
			if rest[0] != '<' {
				return "", false, fmt.Errorf("plantstore: cannot read the answer's Link %q", v)
			}
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return "", false, fmt.Errorf("plantstore: cannot read the answer's Link %q", v)
			}
			target := rest[1:end]
			var params []string
			params, rest = linkParams(rest[end+1:])
			for _, p := range params {
				name, value, _ := strings.Cut(p, "=")
				if !strings.EqualFold(strings.TrimSpace(name), "rel") {
					continue
				}
				for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(value), `"`)) {
					if strings.EqualFold(rel, "next") {
						return target, true, nil
					}
				}
			}
		}
	}
	return "", false, nil
}

// linkParams splits s, what follows a link's target, into its ;-separated
// parameters up to the comma that ends the link (outside quotes), and the
// rest of s after that comma.
func linkParams(s string) (params []string, rest string) {
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case c == '\\' && quoted:
			i++
		case c == ';' && !quoted:
			if p := strings.TrimSpace(s[start:i]); p != "" {
				params = append(params, p)
			}
			start = i + 1
		case c == ',' && !quoted:
			if p := strings.TrimSpace(s[start:i]); p != "" {
				params = append(params, p)
			}
			return params, s[i+1:]
		}
	}
	if p := strings.TrimSpace(s[start:]); p != "" {
		params = append(params, p)
	}
	return params, ""
}
