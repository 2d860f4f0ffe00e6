package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func whsec(n int) string {
	return "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xA5}, n))
}

// signsWith reports whether s signs as HMAC-SHA256 keyed with key does.
func signsWith(s Secret, key []byte) bool {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("id.1.body"))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return Sign(s, "id", time.Unix(1, 0), []byte("body")) == want
}

func TestParseSecret(t *testing.T) {
	for _, n := range []int{24, 32, 64} {
		s, err := ParseSecret(whsec(n))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !signsWith(s, bytes.Repeat([]byte{0xA5}, n)) {
			t.Errorf("%d bytes: the secret does not sign with its key", n)
		}
	}
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty", "", "the secret is empty"},
		{"no prefix", base64.StdEncoding.EncodeToString(testKey), `does not start with "whsec_"`},
		{"other prefix", "whsk_" + base64.StdEncoding.EncodeToString(testKey), `does not start with "whsec_"`},
		{"prefix only", "whsec_", "no key"},
		{"not base64", "whsec_" + strings.Repeat("*", 44), "not valid standard base64"},
		{"URL-safe base64", "whsec_" + base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xFB}, 32)), "not valid standard base64"},
		{"no padding", "whsec_" + base64.RawStdEncoding.EncodeToString(testKey), "not valid standard base64"},
		{"trailing newline", testSecretText + "\n", "white space"},
		{"inner newline", testSecretText[:20] + "\n" + testSecretText[20:], "white space"},
		{"23 bytes", whsec(23), "23 bytes long; at least 24"},
		{"65 bytes", whsec(65), "65 bytes long; at most 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSecret(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one saying %q", err, tt.wantErr)
			}
			if enc := strings.TrimPrefix(tt.in, "whsec_"); len(enc) > 8 && strings.Contains(err.Error(), enc[:8]) {
				t.Errorf("error %q repeats the secret", err)
			}
		})
	}
}

func TestReadSecretFile(t *testing.T) {
	for _, content := range []string{testSecretText, testSecretText + "\n", testSecretText + "\r\n", "  " + testSecretText + " \n\n"} {
		path := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSecretFile(path)
		if err != nil {
			t.Fatalf("%q: %v", content, err)
		}
		if !signsWith(s, testKey) {
			t.Errorf("%q: wrong key", content)
		}
	}

	path := filepath.Join(t.TempDir(), "secret")
	short := whsec(16)
	if err := os.WriteFile(path, []byte(short+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadSecretFile(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "at least 24") || strings.Contains(err.Error(), short[6:14]) {
		t.Errorf("short key: error = %v, want the file named, the problem said and the secret left out", err)
	}
	if _, err := ReadSecretFile(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("no error for a missing file")
	}
}

func TestSecretNeverPrintsTheKey(t *testing.T) {
	s := testSecret(t)
	Sign(s, "evt", time.Unix(1, 0), nil) // a pool in use prints too
	leaks := []string{
		string(testKey),
		base64.StdEncoding.EncodeToString(testKey),
		hex.EncodeToString(testKey),
		fmt.Sprint([]byte(testKey)),
		fmt.Sprint(testKey[:4]), // the start of the decimal bytes
	}
	type holder struct{ S Secret }
	type hidden struct{ s Secret }
	var printed []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
		for _, v := range []any{s, &s, holder{s}, &holder{s}, hidden{s}, &hidden{s}, []Secret{s}, map[string]Secret{"k": s}} {
			printed = append(printed, fmt.Sprintf(verb, v))
		}
	}
	printed = append(printed, s.String(), s.GoString(), fmt.Sprint(s), fmt.Sprintln(s))
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "secret", s, "holder", holder{s})
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "secret", s, "hidden", hidden{s})
	printed = append(printed, logged.String())
	js, err := json.Marshal(holder{s})
	if err != nil {
		t.Fatal(err)
	}
	printed = append(printed, string(js))
	for _, p := range printed {
		for _, leak := range leaks {
			if strings.Contains(p, leak) {
				t.Errorf("%q shows the key (%q)", p, leak)
			}
		}
	}
	if got := fmt.Sprintf("%v", s); got != "whsec_[redacted]" {
		t.Errorf("%%v = %q", got)
	}
}
