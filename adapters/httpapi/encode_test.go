package httpapi

import (
	"encoding/json"
	"testing"
)

// Answers repeat stored text exactly: only what JSON requires is escaped.
func TestAppendJSONStringEscapesOnlyWhatJSONRequires(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Monstera deliciosa", `"Monstera deliciosa"`},
		{`say "hi" \ bye`, `"say \"hi\" \\ bye"`},
		{"a\nb\rc\td\x00e\x1f\b\f", `"a\nb\rc\td\u0000e\u001f\b\f"`},
		{"<script>&amp;</script>", `"<script>&amp;</script>"`},
		{"é 🌵 \u2028 \u3000 \x7f \ufffd", "\"é 🌵 \u2028 \u3000 \x7f \ufffd\""},
		{"a\xffb", "\"a\ufffdb\""},
	}
	for _, tt := range tests {
		got := string(appendJSONString([]byte("x"), tt.in))
		if got != "x"+tt.want {
			t.Errorf("%q: got %s, want %s", tt.in, got[1:], tt.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got[1:]), &back); err != nil || (back != tt.in && tt.in != "a\xffb") {
			t.Errorf("%q: reads back as %q, %v", tt.in, back, err)
		}
	}
}
