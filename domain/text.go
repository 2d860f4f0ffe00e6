package domain

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Length limits in Unicode code points.
const (
	MaxNameLength = 200
	MaxTagLength  = 64
)

// checkText applies the character rules shared by name and tag and returns
// the problem, or "" when s is acceptable.
func checkText(s string, max int) string {
	if s == "" {
		return "must not be empty"
	}
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	n, blank := 0, true
	for _, r := range s {
		n++
		if r < 0x20 || r == 0x7f {
			return "must not contain control characters"
		}
		if blank && !unicode.IsSpace(r) {
			blank = false
		}
	}
	if n > max {
		return "must be at most " + strconv.Itoa(max) + " characters"
	}
	if blank {
		return "must not be only white space"
	}
	return ""
}
