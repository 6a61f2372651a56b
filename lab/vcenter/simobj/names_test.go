package simobj

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

func TestEscapeName(t *testing.T) {
	for name, want := range map[string]string{
		"plain": "plain", "a/b": "a%2fb", `a\b`: "a%5cb", "50%": "50%25", `pg\/%`: "pg%5c%2f%25",
		"a%2fb": "a%2fb", "a%2Fb": "a%2Fb", "%zz": "%25zz",
	} {
		if got := EscapeName(name); got != want {
			t.Errorf("EscapeName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestNumber(t *testing.T) {
	for id, want := range map[string]string{"host-21": "21", "domain-c7": "c7", "datastore-100": "100"} {
		if got := Number(types.ManagedObjectReference{Type: "HostSystem", Value: id}); got != want {
			t.Errorf("Number(%s) = %q, want %q", id, got, want)
		}
	}
}
