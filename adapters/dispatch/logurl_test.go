package dispatch

import "testing"

func TestLoggedURLsLeaveOutTheQueryAndUserInformation(t *testing.T) {
	for raw, want := range map[string]string{
		"https://hooks.example/in?token=s3cret": "https://hooks.example/in",
		"http://u:pw@127.0.0.1:8090/hook?":      "http://127.0.0.1:8090/hook",
		"https://plain.example/x":               "https://plain.example/x",
		"http://bad host/":                      "(unparsable URL)",
	} {
		if got := loggedURL(raw); got != want {
			t.Errorf("loggedURL(%q) = %q; want %q", raw, got, want)
		}
	}
}
