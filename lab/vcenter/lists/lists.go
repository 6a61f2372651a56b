// Package lists holds the slice helpers the lab's packages share (Go 1.19 has no slices package).
package lists

// Contains reports whether value is in list.
func Contains(list []string, value string) bool {
	for _, item := range list {
		if item == value {
			return true
		}
	}
	return false
}
