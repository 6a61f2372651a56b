package faults

import (
	"strings"
	"testing"
	"time"
)

func TestFaultValidation(t *testing.T) {
	known := func(name string) bool { return name == "vm-1" }
	delay := 100
	cases := map[string]struct {
		fault Fault
		want  string
	}{
		"unknown kind":      {Fault{Kind: "explode"}, `kind "explode" is not one of`},
		"needs a VM":        {Fault{Kind: FailReconfigure}, `needs "vm"`},
		"unknown VM":        {Fault{Kind: ShutdownIgnored, VM: "vm-9"}, `no VM named "vm-9"`},
		"drop takes no VM":  {Fault{Kind: DropConnection, VM: "vm-1"}, `takes no "vm"`},
		"negative count":    {Fault{Kind: DropConnection, Count: -1}, "count must be at least 1"},
		"delay needed":      {Fault{Kind: ShutdownDelay}, `needs "delay_ms"`},
		"delay elsewhere":   {Fault{Kind: ShutdownIgnored, VM: "vm-1", DelayMS: &delay}, `"delay_ms" only applies`},
		"message elsewhere": {Fault{Kind: DropConnection, Message: "x"}, `"message" only applies`},
	}
	for name, tc := range cases {
		f := tc.fault
		if err := f.Validate(known); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	f := Fault{Kind: FailReconfigure, VM: "vm-1"}
	if err := f.Validate(known); err != nil || f.Count != 1 {
		t.Errorf("fail_reconfigure defaults to one use: %v %+v", err, f)
	}
}

func TestFaultUse(t *testing.T) {
	s := NewStore()
	s.Add(Fault{Kind: FailReconfigure, VM: "vm-1", Count: 2})
	s.Add(Fault{Kind: ShutdownIgnored, VM: "vm-2"})
	delay := 1500
	s.Add(Fault{Kind: ShutdownDelay, DelayMS: &delay})
	if s.Take(FailReconfigure, "vm-2", "") != nil {
		t.Error("a VM's fault applied to another VM")
	}
	for i := 0; i < 2; i++ {
		if s.Take(FailReconfigure, "vm-1", "") == nil {
			t.Fatalf("use %d of a two-use fault missing", i+1)
		}
	}
	if s.Take(FailReconfigure, "vm-1", "") != nil {
		t.Error("fault used more than its count")
	}
	for i := 0; i < 3; i++ {
		if s.Take(ShutdownIgnored, "vm-2", "") == nil {
			t.Fatal("a fault without count must last until cleared")
		}
	}
	if d := s.ShutdownDelay("any-vm", time.Second); d != 1500*time.Millisecond {
		t.Errorf("shutdown delay for any VM: %s", d)
	}
	if n := s.Clear(); n != 2 || len(s.List()) != 0 || s.ShutdownDelay("vm", time.Second) != time.Second {
		t.Errorf("clear removed %d faults, left %v", n, s.List())
	}
}

func TestDropConnectionByMethod(t *testing.T) {
	s := NewStore()
	f := Fault{Kind: DropConnection, Method: "ReconfigVM_Task"}
	if err := f.Validate(func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	s.Add(f)
	if s.Take(DropConnection, "", "RetrievePropertiesEx") != nil {
		t.Fatal("a fault for ReconfigVM_Task applied to another method")
	}
	if s.Take(DropConnection, "", "ReconfigVM_Task") == nil {
		t.Fatal("the fault did not apply to its method")
	}
	if s.Take(DropConnection, "", "ReconfigVM_Task") != nil {
		t.Fatal("the fault applied more often than its count")
	}
	bad := Fault{Kind: FailReconfigure, VM: "vm-1", Method: "ReconfigVM_Task"}
	if bad.Validate(func(string) bool { return true }) == nil {
		t.Fatal("method accepted on a fault kind other than drop_connection")
	}
}
