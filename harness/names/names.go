// Package names joins the values of a closed set of named constants (fault
// kinds, agents, placement modes) for the messages that list what is known.
package names

import "strings"

// Join is values as "a, b, c".
func Join[T ~string](values []T) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
