package httpapi

import "testing"

// BenchmarkDecodeNewPlant is the strict decoder alone; the whole request path
// is BenchmarkRequestPath in cmd/plantstore.
func BenchmarkDecodeNewPlant(b *testing.B) {
	body := []byte(`{"id":12345,"name":"Monstera deliciosa","tag":"tropical"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := decodeNewPlant(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendJSONString is the quoting of the strings an answer holds:
// a plant's name, an error message, and text that needs escapes.
func BenchmarkAppendJSONString(b *testing.B) {
	for _, s := range []struct{ name, text string }{
		{"name", "Monstera deliciosa"},
		{"message", "name: must not be empty; tag: must be at most 64 characters"},
		{"escapes", "a \"quoted\" C:\\path\nand\ta \x01 🌵"},
	} {
		buf := make([]byte, 0, 256)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = appendJSONString(buf[:0], s.text)
			}
		})
	}
}
