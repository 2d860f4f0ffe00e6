package application

import (
	"testing"
	"time"
)

// With the defaults, the wait after the nth failed attempt is a random
// point in the upper half of one second doubled n-1 times, and never more
// than an hour, up to the 150 or so attempts that fit in the maximum age.
func TestBackoffDoublesFromASecondToAnHourWithJitter(t *testing.T) {
	d := &Dispatcher{cfg: DispatchConfig{}.withDefaults()}
	for n := 1; n <= 300; n++ {
		want := time.Hour
		if n <= 13 { // 2^12 s is past an hour
			want = min(time.Hour, time.Second<<(n-1))
		}
		seen := map[time.Duration]bool{}
		for range 200 {
			got := d.backoff(n)
			if got < want/2 || got > want {
				t.Fatalf("backoff(%d) = %s; want within [%s, %s]", n, got, want/2, want)
			}
			seen[got] = true
		}
		if len(seen) < 100 {
			t.Errorf("backoff(%d) took %d distinct values in 200 draws; want jitter", n, len(seen))
		}
	}
}

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
