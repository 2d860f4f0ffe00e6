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
