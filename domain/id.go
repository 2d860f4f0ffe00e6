package domain

import "strconv"

// ID identifies a plant. Clients choose it; every int64 is a valid id.
type ID int64

// ParseID reads an id written as text, as in a path or a query string: an
// optional '-', then decimal digits with no leading zero (0 itself aside),
// within the signed 64-bit range, and nothing else. "+7", "07", " 7" and
// "7.0" are refused, so that every id has one spelling. The error is a
// *FieldError for "id"; callers that read the id under another name rename it.
func ParseID(s string) (ID, error) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" || (len(digits) > 1 && digits[0] == '0') {
		return 0, &FieldError{Field: "id", Problem: idProblem}
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, &FieldError{Field: "id", Problem: idProblem}
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, &FieldError{Field: "id", Problem: "must be between -9223372036854775808 and 9223372036854775807"}
	}
	return ID(n), nil
}

const idProblem = "must be a decimal integer: an optional -, then digits without leading zeros"

// String returns the id in the one spelling ParseID reads back.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }
