package lists

import "testing"

func TestContains(t *testing.T) {
	list := []string{"timeSliced", "mig"}
	if !Contains(list, "mig") || Contains(list, "shared") || Contains(nil, "") {
		t.Error("Contains answers wrong")
	}
}
