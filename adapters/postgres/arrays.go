package postgres

import "strconv"

// The batch statement takes its rows as five arrays. They are written here
// as PostgreSQL array literals in one pass each, rather than through
// pq.Array, whose arrays of nullable strings go through reflection for every
// element of every batch.

// textArray returns the text[] literal of elems; element k is NULL when
// valid is not nil and valid[k] is false. Every element is quoted, so no
// content (a comma, a brace, the word NULL, an empty string) can change the
// array's shape.
func textArray(elems []string, valid []bool) string {
	size := 2
	for _, s := range elems {
		size += len(s) + 4
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	for k, s := range elems {
		if k > 0 {
			b = append(b, ',')
		}
		if valid != nil && !valid[k] {
			b = append(b, "NULL"...)
			continue
		}
		b = appendQuoted(b, s)
	}
	return string(append(b, '}'))
}

// appendQuoted appends s as a quoted element of an array literal.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// bigintArray returns the bigint[] literal of ids.
func bigintArray(ids []int64) string {
	b := make([]byte, 0, 2+len(ids)*20)
	b = append(b, '{')
	for k, id := range ids {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, '}'))
}

// boolArray returns the boolean[] literal of values.
func boolArray(values []bool) string {
	b := make([]byte, 0, 2+2*len(values))
	b = append(b, '{')
	for i, v := range values {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendBool(b, v)
	}
	return string(append(b, '}'))
}
